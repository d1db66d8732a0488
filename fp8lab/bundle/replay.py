"""Kernels that serve a bundle's recorded outputs, so G1 and G3 run unchanged.

:func:`load_bundle` reads ``DIR/bundle.json`` and refuses (``BundleError``) an
unknown schema, another gate, a population this version does not generate,
or cases that differ from this version's. Its kernel looks each call up by
what the gate hands it: G1 by (input dtype, sha256 of the input bytes,
float32 scale bits); G3 by (sha256 of a, sha256 of b, s_in and s_w bits,
out dtype). The gate computes every expectation itself; the kernel only
returns the bytes the user wrote. Each of these raises, and so FAILs that
case with the case's name: an input file that is missing or whose sha256
changed (a, b too), an output file that is missing, short or long, and a
call no case matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.bundle.cases import (
    OUT_DTYPES,
    SCHEMA,
    BundleCase,
    g1_bundle_cases,
    g1_sidecar_line,
    g3_bundle_cases,
    g3_sidecar_line,
    population_sha256,
    sha256,
)
from fp8lab.bundle.export import bundle_format
from fp8lab.bundle.files import (
    BundleCaseError,
    BundleError,
    input_fault,
    read_output,
    refuse_escapes,
)
from fp8lab.bundle.format import BundleFormat
from fp8lab.kernels.matmul_protocol import VLLM_CPP_SPEC
from fp8lab.runtime.bounded import BoundedInputError, load_json
from fp8lab.specs.nan import DEFAULT_NAN_POLICY, NAN_POLICIES

__all__ = [
    "G1_BUNDLE",
    "G3_BUNDLE",
    "BundleMatmulKernel",
    "BundleQuantKernel",
    "load_bundle",
    "replay_bundle",
]

MAX_DOCUMENT_BYTES = 64 << 20  # bundle.json: the case list, a few hundred kB
_OUT_VIEW = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


@dataclass(frozen=True)
class _Entry:
    case: BundleCase
    fault: str  # why the inputs are not the exported ones; "" if they are


def _bits(value: Any) -> int:
    return int(np.float32(value).view(np.uint32))


def _g1_key(x: np.ndarray, scale: Any) -> tuple[Any, ...]:
    # The shard case hands per-shard scales; the bundle recorded the collapsed one.
    s = np.max(np.asarray(scale, np.float32)) if np.ndim(scale) else scale
    return (x.dtype.name, sha256(np.ascontiguousarray(x).tobytes()), _bits(s))


def _g3_key(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> tuple[Any, ...]:
    digests = (sha256(np.ascontiguousarray(v).tobytes()) for v in (a, b))
    return (*digests, _bits(s_in), _bits(s_w), out)


def _case_key(case: BundleCase) -> tuple[Any, ...]:
    e, v = case.entry, case.inputs
    if "input" in v:
        return _g1_key(v["input"], e["scale"])
    out = {b: g for g, b in OUT_DTYPES.items()}[e["out_dtype"]]
    return _g3_key(v["a"], v["b"], e["s_in"], e["s_w"], out)


class _Bundle:
    """The recorded outputs of one bundle, by the key of the call that wants them."""

    def __init__(self, root: Path, cases: list[BundleCase]) -> None:
        self.root = root
        self.entries: dict[tuple[Any, ...], _Entry] = {}
        for case in cases:
            self.entries[_case_key(case)] = _Entry(case, input_fault(root, case))

    def output(self, key: tuple[Any, ...], what: str) -> bytes:
        """The output bytes recorded for the call with ``key``.

        Raises:
            BundleCaseError: naming the case and what is wrong with its files.
        """
        entry = self.entries.get(key)
        if entry is None:
            raise BundleCaseError(f"no case of the bundle matches this call ({what})")
        if entry.fault:
            raise BundleCaseError(f"case {entry.case.name!r}: {entry.fault}")
        return read_output(self.root, entry.case, "output", entry.case.output_bytes)


@dataclass(frozen=True)
class BundleQuantKernel:
    """A G1 kernel whose codes are the bundle's ``output`` files.

    ``nan_policy`` is the policy the user states for the kernel that wrote them.
    """

    name: str
    bundle: _Bundle
    nan_policy: str

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """The recorded codes for ``x`` at ``scale``."""
        what = f"{x.dtype.name} input of {x.size} words at scale {scale!r}"
        data = self.bundle.output(_g1_key(x, scale), what)
        return np.frombuffer(data, np.uint8).copy()


@dataclass(frozen=True)
class BundleMatmulKernel:
    """A G3 kernel whose products are the bundle's ``output`` files (vllm.cpp's model)."""

    name: str
    bundle: _Bundle
    spec: Any = VLLM_CPP_SPEC

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """The recorded [M,N] output for these operands."""
        what = f"a {a_codes.shape}, b {b_codes.shape}, s_in {s_in!r}, s_w {s_w!r}, {out_dtype}"
        data = self.bundle.output(_g3_key(a_codes, b_codes, s_in, s_w, out_dtype), what)
        view = _OUT_VIEW[OUT_DTYPES[out_dtype]]
        return np.frombuffer(data, view).reshape(a_codes.shape[0], b_codes.shape[0]).copy()


def _read_document(root: Path) -> dict[str, Any]:
    path = root / "bundle.json"
    if path.is_symlink():
        raise BundleError(f"{path} is a symbolic link; a bundle is read only from its own files")
    if not path.is_file():
        raise BundleError(f"{root} has no bundle.json (make one with fp8lab export)")
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise BundleError(f"{path} is over {MAX_DOCUMENT_BYTES:,} bytes")
        document = load_json(path.read_bytes(), str(path), max_bytes=MAX_DOCUMENT_BYTES)
    except OSError as exc:
        raise BundleError(f"{path} is not readable: {exc.strerror}") from None
    except BoundedInputError as exc:
        raise BundleError(f"{exc}") from None
    if not isinstance(document, dict):
        raise BundleError(f"{path} is not a JSON object")
    return document


def load_bundle(root: Path, gate: str, nan_policy: str = DEFAULT_NAN_POLICY) -> Any:
    """The kernel that serves ``root``'s outputs to ``gate`` (one with bundles: G1, G3, GQ).

    GQ: a :class:`~fp8lab.bundle.gq.BundleSchemeKernel` for the bundle's scheme
    and rule; a case list that is empty (population sha256 still this
    version's) is loaded with no cases, so GQ examines nothing and FAILs.

    Raises:
        BundleError: for an unknown NaN policy or schema, another gate, a population or case
            list this version does not generate, or no readable bundle.json.
    """
    return replay_bundle(root, gate, nan_policy)[0]


def replay_bundle(
    root: Path,
    gate: str,
    nan_policy: str | None = None,
    expect: dict[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """:func:`load_bundle`'s kernel and the keywords its gate's runner takes with it.

    ``nan_policy`` is the policy stated for the kernel that wrote the outputs
    (None: canonical); ``expect`` the values the bundle must have been exported
    for (its format's keys: GQ's scheme and rule).

    Raises:
        BundleError: as :func:`load_bundle`, or for a bundle exported for other values.
    """
    try:
        fmt = bundle_format(gate)
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    policy = DEFAULT_NAN_POLICY if nan_policy is None else nan_policy
    if policy not in NAN_POLICIES:
        known = ", ".join(NAN_POLICIES)
        raise BundleError(f"unknown NaN policy {policy!r}; use one of {known}")
    document = _read_document(root)
    if document.get("schema") != SCHEMA:
        raise BundleError(f"unknown bundle schema {document.get('schema')!r}; this reads {SCHEMA}")
    if document.get("gate") != gate:
        raise BundleError(f"{root} is a bundle of {document.get('gate')!r}, not {gate}")
    named = {k: str(document.get(k)) for k in fmt.keys}
    if expect is not None and named != {k: str(expect.get(k)) for k in fmt.keys}:
        held = ", ".join(f"{k} {v}" for k, v in named.items())
        asked = " ".join(f"--{k} {expect.get(k)}" for k in fmt.keys)
        raise BundleError(f"{root} holds {held}, not {asked}")
    try:
        cases = fmt.cases(**named)
    except ValueError as exc:
        what = ", ".join(f"{k} {document.get(k)!r}" for k in fmt.keys)
        raise BundleError(f"{root}: {what}: {exc}") from None
    ours = population_sha256(cases, fmt.head(named))
    if document.get("population_sha256") != ours:
        raise BundleError(
            f"{root} holds another population (sha256 {document.get('population_sha256')!r}, "
            f"exported by fp8lab {document.get('fp8lab_version')!r}); this version's is "
            f"{ours[:12]}...: export again and rerun the kernel"
        )
    refuse_escapes(root, cases)
    listed = document.get("cases")
    if fmt.may_be_empty and listed == []:
        answered: list[BundleCase] = []  # the kernel answered nothing: the gate examines nothing
    elif listed == [c.entry for c in cases]:
        answered = cases
    else:
        raise BundleError(f"{root}/bundle.json cases differ from its population; export again")
    return fmt.replay(f"bundle:{root}", root, answered, named, policy)


def _quant_replay(
    name: str, root: Path, cases: list[BundleCase], named: Any, nan_policy: str
) -> tuple[Any, dict[str, Any]]:
    return BundleQuantKernel(name, _Bundle(root, cases), nan_policy), {}


def _matmul_replay(
    name: str, root: Path, cases: list[BundleCase], named: Any, nan_policy: str
) -> tuple[Any, dict[str, Any]]:
    return BundleMatmulKernel(name, _Bundle(root, cases)), {}


G1_BUNDLE = BundleFormat(g1_bundle_cases, g1_sidecar_line, _quant_replay)
G3_BUNDLE = BundleFormat(g3_bundle_cases, g3_sidecar_line, _matmul_replay)
