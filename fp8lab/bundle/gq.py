"""GQ in a bundle: the kernel calls GQ makes for one scheme and rule, and their replay.

Each case is one call of :func:`fp8lab.gates.gq.gq_calls` (same order, same
names): ``name``, ``word_class``, ``input_dtype``, ``m``, ``k``, ``input``,
``input_sha256``, for nvfp4 ``global_amax_hex`` (the float32 bits of GQ's
``global_scale``), then the two files the user writes, ``codes`` (m*k uint8)
and ``scales`` (``scales_dtype`` float32, e8m0fnu or e4m3fn bytes, of shape
``scales_shape``), as the C ABI's ``fp8lab_scheme_quant`` writes them. The
document names ``scheme`` and ``rule``; the population sha256 starts with
the line ``scheme rule``. docs/bundles.md.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fp8lab.bundle.cases import DTYPE_EXT, BundleCase, f32_hex, sha256
from fp8lab.bundle.files import BundleCaseError, input_fault, read_output
from fp8lab.bundle.format import BundleFormat
from fp8lab.gates.gq import gq_calls
from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS, scales_dtype, scales_shape

__all__ = ["GQ_BUNDLE", "BundleSchemeKernel", "gq_bundle_cases", "gq_sidecar_line"]

_SCALE_EXT = {"float32": "f32", "e8m0fnu": "e8m0", "e4m3fn": "e4m3"}  # scale format -> extension


def gq_bundle_cases(scheme: str, rule: str) -> list[BundleCase]:
    """This version's GQ calls for ``scheme`` under ``rule`` as bundle cases, in GQ's order.

    Raises:
        ValueError: for an unknown scheme or rule, or a rule of another scheme.
    """
    calls = gq_calls(scheme, rule)
    scale_format, width = SCHEME_LAYOUTS[scheme][2], scales_dtype(scheme).itemsize
    out: list[BundleCase] = []
    for i, call in enumerate(calls):
        x = call.args[0]
        m, k = x.shape
        shape = list(scales_shape(scheme, m, k))
        entry: dict[str, Any] = {
            "name": call.name,
            "word_class": call.label,
            "input_dtype": x.dtype.name,
            "m": int(m),
            "k": int(k),
            "input": f"inputs/{i:03d}.{DTYPE_EXT[x.dtype.name]}",
            "input_sha256": sha256(x.tobytes()),
        }
        if len(call.args) > 1:
            entry["global_amax_hex"] = f32_hex(np.asarray(call.args[1]).reshape(-1)[0])
        entry |= {
            "codes": f"outputs/{i:03d}.codes.u8",
            "scales": f"outputs/{i:03d}.scales.{_SCALE_EXT[scale_format]}",
            "scales_dtype": scale_format,
            "scales_shape": shape,
        }
        out.append(BundleCase(entry, {"input": x}, int(m * k) + int(np.prod(shape)) * width))
    return out


def gq_sidecar_line(entry: dict[str, Any]) -> str:
    """``input_dtype m k global_amax_hex input codes scales scales_dtype scales_count name``.

    ``global_amax_hex`` is ``-`` outside nvfp4; ``scales_count`` is the product of ``scales_shape``.
    """
    fields = [entry["input_dtype"], entry["m"], entry["k"], entry.get("global_amax_hex", "-")]
    fields += [entry[f] for f in ("input", "codes", "scales", "scales_dtype")]
    fields += [int(np.prod(entry["scales_shape"])), entry["name"]]
    return " ".join(str(f) for f in fields)


def _key(x: np.ndarray, rest: tuple[Any, ...]) -> tuple[Any, ...]:
    g = f32_hex(np.asarray(rest[0]).reshape(-1)[0]) if rest else "-"
    return (x.dtype.name, sha256(np.ascontiguousarray(x).tobytes()), g)


@dataclass
class BundleSchemeKernel:
    """A GQ kernel whose codes and scales are a bundle's ``codes`` and ``scales`` files.

    ``cases`` are the cases the bundle holds (none for a bundle with an empty
    list); calls with equal inputs are served in the bundle's order.
    """

    name: str
    root: Path
    scheme: str
    rule: str
    cases: list[BundleCase]

    def __post_init__(self) -> None:
        self._queue: dict[tuple[Any, ...], list[BundleCase]] = defaultdict(list)
        self._faults = {case.name: input_fault(self.root, case) for case in self.cases}
        for case in self.cases:
            e = case.entry
            key = (e["input_dtype"], e["input_sha256"], e.get("global_amax_hex", "-"))
            self._queue[key].append(case)

    def __call__(self, x: np.ndarray, *global_scale: Any) -> tuple[np.ndarray, np.ndarray]:
        """The recorded ``(codes, scales)`` for this call.

        Raises:
            BundleCaseError: naming the case and what is wrong with its files,
                or saying no case matches the call.
        """
        queue = self._queue.get(_key(x, global_scale))
        if not queue:
            raise BundleCaseError(
                f"no case of the bundle matches this call ({x.dtype.name} {x.shape})"
            )
        case = queue.pop(0)
        if self._faults[case.name]:
            raise BundleCaseError(f"case {case.name!r}: {self._faults[case.name]}")
        e, dtype = case.entry, scales_dtype(self.scheme)
        shape = tuple(e["scales_shape"])
        codes = read_output(self.root, case, "codes", e["m"] * e["k"])
        scales = read_output(self.root, case, "scales", int(np.prod(shape)) * dtype.itemsize)
        return (
            np.frombuffer(codes, np.uint8).reshape(e["m"], e["k"]).copy(),
            np.frombuffer(scales, dtype).reshape(shape).copy(),
        )


def _replay(
    name: str, root: Path, cases: list[BundleCase], named: Any, nan_policy: str
) -> tuple[BundleSchemeKernel, dict[str, Any]]:
    """The bundle's kernel, and GQ's ``calls``: all of this version's, or none for an empty list."""
    kernel = BundleSchemeKernel(name, root, str(named["scheme"]), str(named["rule"]), cases)
    return kernel, {"calls": None if cases else []}


GQ_BUNDLE = BundleFormat(
    gq_bundle_cases, gq_sidecar_line, _replay, keys=("scheme", "rule"), may_be_empty=True
)
