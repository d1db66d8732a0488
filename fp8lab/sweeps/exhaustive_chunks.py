"""One chunk of an exhaustive comparison, and merging chunks into one deterministic result.

Each side is called through :func:`fp8lab.runtime.guard.call_kernel` on its own private,
read-only copy of the patterns (a user's encoder in its own process, which
gets the copy through a pipe); the harness classifies with its own array,
which no encoder ever sees. A change a user's encoder left in the
floating-point environment is collected in ``fp_env_changed``. An encoder
that raises, exits, times out or returns anything but a uint8 array of the
input's shape makes the chunk a fault, named after it.

NaN codes (OFP8 §5.4): where both sides emit a NaN code, each side must emit
the code of the policy it is held to: the requested one, or its own fixed one
if it is a built-in oracle with a fixed policy that differs from the request
(that side is *exempt*; :mod:`fp8lab.sweeps.encoders`). Anything else is
``nan_code_unexplained``, a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import special_codes
from fp8lab.kernels.sources.wire import Foreign
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.encoders import resolve_encoder
from fp8lab.sweeps.mismatch_classes import MISMATCH_CLASSES, classify_mismatches, nan_code_lut
from fp8lab.sweeps.range_run import DEFAULT_CHUNK

__all__ = [
    "EXAMPLES_PER_CLASS",
    "ChunkResult",
    "Merged",
    "chunk_patterns",
    "compare_chunk",
    "compare_codes",
    "exempt_sides",
    "merge_chunks",
    "side_codes",
]

EXAMPLES_PER_CLASS = 5
SIGN_BIT = 1 << 31

Codes = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class ChunkResult:
    """Counts from one chunk of patterns, or the fault that stopped it."""

    examined: int
    by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]
    nan_code_unexplained: int = 0
    start: int = 0
    fault: str = ""
    fp_env_changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Merged:
    """Chunks merged: totals, the lowest examples of each class, the lowest chunk's fault."""

    examined: int
    by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]
    nan_code_unexplained: int
    fault: str
    fp_env_changed: tuple[str, ...] = ()


def exempt_sides(a: str, b: str, fmt: str, saturate: bool, nan: str) -> list[tuple[str, str]]:
    """``(name, fixed policy)`` of each side whose fixed NaN policy differs from ``nan``."""
    out = []
    for name in (a, b):
        fixed = resolve_encoder(name, fmt, saturate, nan).fixed_nan
        if fixed is not None and fixed != nan:
            out.append((name, fixed))
    return out


class _BadOutputError(Exception):
    pass


def _codes(
    name: str, fmt: str, saturate: bool, nan: str, start: int, stop: int, x: np.ndarray
) -> Codes:
    encoder = resolve_encoder(name, fmt, saturate, nan)
    if encoder.pattern_range is not None:
        return call_kernel(encoder.pattern_range, start, stop)
    got = call_kernel(encoder.encode, x)
    if isinstance(got, Foreign):
        raise _BadOutputError(f"returned {got!r}, want a uint8 ndarray of shape {x.shape}")
    if not isinstance(got, np.ndarray):
        raise _BadOutputError(
            f"returned {type(got).__name__}, want a uint8 ndarray of shape {x.shape}"
        )
    if got.dtype != np.uint8 or got.shape != x.shape:
        raise _BadOutputError(f"returned {got.dtype}{list(got.shape)}, want uint8{list(x.shape)}")
    return np.array(got, copy=True)


@lru_cache(maxsize=1)
def _offset_base() -> np.ndarray:
    return np.arange(DEFAULT_CHUNK, dtype=np.uint32)


def _offsets(n: int) -> np.ndarray:
    base = _offset_base()
    return base[:n] if n <= base.size else np.arange(n, dtype=np.uint32)


def _held_codes(fmt: FormatSpec, saturate: bool, policy: str) -> npt.NDArray[np.uint8]:
    """The NaN code a side held to ``policy`` must emit, indexed by the input's sign bit."""
    return np.array(special_codes(fmt, saturate=saturate, nan=policy).nan, np.uint8)


def _sign_spans(start: int, n: int) -> list[tuple[int, int, int]]:
    """``(sign, lo, hi)``: the offsets of ``[start, start + n)`` whose patterns have that sign."""
    cut = min(max(SIGN_BIT - start, 0), n)
    return [(s, lo, hi) for s, lo, hi in ((0, 0, cut), (1, cut, n)) if lo < hi]


def _nan_unexplained(
    start: int,
    codes: tuple[Codes, Codes],
    policies: tuple[str, str],
    fmt: FormatSpec,
    saturate: bool,
) -> int:
    """Patterns where both sides emit NaN codes and a side's is not its held one.

    The sign of pattern ``start + i`` is constant on each side of ``2**31``, so
    the held codes are two scalars per side, not a per-element gather.
    """
    lut = nan_code_lut(fmt)
    held = [_held_codes(fmt, saturate, policy) for policy in policies]
    bad = 0
    for sign, lo, hi in _sign_spans(start, codes[0].size):
        a, b = codes[0][lo:hi], codes[1][lo:hi]
        both = lut[a] & lut[b]
        if both.any():
            wrong = (a != held[0][sign]) | (b != held[1][sign])
            bad += int(np.count_nonzero(both & wrong))
    return bad


def side_codes(
    name: str, fmt: str, saturate: bool, nan: str, start: int, stop: int, x: np.ndarray
) -> Codes | str:
    """``name``'s codes for the patterns ``[start, stop)`` (``x``), or the fault line."""
    try:
        return _codes(name, fmt, saturate, nan, start, stop, x)
    except KernelFaultError as exc:
        return exc.line(f"encoder {name!r}")
    except _BadOutputError as exc:
        return f"encoder {name!r} {exc}"


def chunk_patterns(start: int, stop: int) -> npt.NDArray[np.float32]:
    """The float32 values of the bit patterns ``[start, stop)``."""
    return (_offsets(stop - start) + np.uint32(start)).view(np.float32)


def compare_chunk(
    a: str, b: str, fmt: str, saturate: bool, nan: str, start: int, stop: int
) -> ChunkResult:
    """Compare ``a`` and ``b`` on the float32 patterns ``[start, stop)``."""
    spec = get_format(fmt)
    x = chunk_patterns(start, stop)
    sides = []
    for name in (a, b):
        got = side_codes(name, spec.name, saturate, nan, start, stop, x)
        if isinstance(got, str):
            return ChunkResult(0, {}, {}, 0, start, got)
        sides.append(got)
    return compare_codes(a, b, spec, saturate, nan, start, x, (sides[0], sides[1]))


def compare_codes(
    a: str,
    b: str,
    spec: FormatSpec,
    saturate: bool,
    nan: str,
    start: int,
    x: npt.NDArray[np.float32],
    codes: tuple[Codes, Codes],
) -> ChunkResult:
    """Classify where ``a``'s and ``b``'s codes for the patterns from ``start`` (``x``) differ.

    A disagreement where both codes are NaN codes is ``nan_code`` whatever the
    input (the first class of :mod:`fp8lab.sweeps.mismatch_classes`), so only
    the others go through :func:`classify_mismatches`.
    """
    codes_a, codes_b = codes
    differ = np.flatnonzero(codes_a != codes_b)
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    examples: dict[str, list[dict[str, str]]] = {}

    def note(cls: str, hits: np.ndarray) -> None:
        by_class[cls] = int(hits.size)
        if hits.size:
            examples[cls] = [
                {
                    "input": f"0x{start + int(i):08x}",
                    a: f"{codes_a[i]:#04x}",
                    b: f"{codes_b[i]:#04x}",
                }
                for i in hits[:EXAMPLES_PER_CLASS]
            ]

    if differ.size:
        lut = nan_code_lut(spec)
        both = lut[codes_a[differ]] & lut[codes_b[differ]]
        note(MISMATCH_CLASSES[0], differ[both])
        rest = differ[~both]
        if rest.size:
            classes = classify_mismatches(x[rest], codes_a[rest], codes_b[rest], spec)
            for k, cls in enumerate(MISMATCH_CLASSES[1:], start=1):
                note(cls, rest[classes == k])
    exempt = dict(exempt_sides(a, b, spec.name, saturate, nan))
    if exempt:
        policies = (exempt.get(a, nan), exempt.get(b, nan))
        unexplained = _nan_unexplained(start, (codes_a, codes_b), policies, spec, saturate)
    else:
        unexplained = by_class["nan_code"]
    changed = tuple(
        change
        for name in (a, b)
        if (host := resolve_encoder(name, spec.name, saturate, nan).host) is not None
        for change in host.env_changes
    )
    return ChunkResult(codes_a.size, by_class, examples, unexplained, start, "", changed)


def _class_rank(cls: str) -> tuple[int, str]:
    return (MISMATCH_CLASSES.index(cls) if cls in MISMATCH_CLASSES else len(MISMATCH_CLASSES), cls)


def merge_chunks(results: list[ChunkResult]) -> Merged:
    """Merge chunk results in any completion order into the same :class:`Merged`."""
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    rows: dict[str, list[dict[str, str]]] = {}
    for r in results:
        for cls, n in r.by_class.items():
            by_class[cls] = by_class.get(cls, 0) + n
        for cls, found in r.examples.items():
            rows.setdefault(cls, []).extend(found)
    examples = {
        cls: sorted(found, key=lambda row: int(row["input"], 16))[:EXAMPLES_PER_CLASS]
        for cls, found in sorted(rows.items(), key=lambda kv: _class_rank(kv[0]))
    }
    faults = sorted((r.start, r.fault) for r in results if r.fault)
    return Merged(
        examined=sum(r.examined for r in results),
        by_class=by_class,
        examples=examples,
        nan_code_unexplained=sum(r.nan_code_unexplained for r in results),
        fault=faults[0][1] if faults else "",
        fp_env_changed=tuple(sorted({c for r in results for c in r.fp_env_changed})),
    )
