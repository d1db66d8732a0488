"""Compare two sides' codes for one chunk of patterns and classify every disagreement.

NaN codes (OFP8 §5.4): where both sides emit a NaN code, each side must emit
the code of the policy it is held to: the requested one, or its own fixed one
if it is a built-in oracle with a fixed policy that differs from the request
(that side is *exempt*; :mod:`fp8lab.sweeps.encoders`). Anything else is
``nan_code_unexplained``, a failure. Under ``any`` no side is held to a code:
both-NaN disagreements are counted, and none is a failure.

The NaN-code work is whole-array: a disagreement where both codes are NaN
codes is ``nan_code`` whatever the input (the first class of
:mod:`fp8lab.sweeps.mismatch_classes`), found by whole-array integer tests of the codes
(:func:`fp8lab.sweeps.mismatch_classes.nan_code_mask`); the
sign of pattern ``start + i`` is constant on each side of 2**31, so the held
codes are scalars per span. Only the other disagreements are classified per element.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import special_codes
from fp8lab.specs.format import FormatSpec
from fp8lab.sweeps.encoders import ANY_NAN, resolve_encoder
from fp8lab.sweeps.mismatch_classes import MISMATCH_CLASSES, classify_mismatches, nan_code_mask

__all__ = ["EXAMPLES_PER_CLASS", "ChunkResult", "compare_codes", "exempt_sides"]

EXAMPLES_PER_CLASS = 5
SIGN_BIT = 1 << 31
_SCAN = 1 << 16  # block in which the first examples of a mask are looked for

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
    fp_env_read: tuple[str, ...] = ()  # each user encoder's host: ptrace or self-reported


def exempt_sides(a: str, b: str, fmt: str, saturate: bool, nan: str) -> list[tuple[str, str]]:
    """``(name, fixed policy)`` of each side whose fixed NaN policy differs from ``nan``.

    None under ``any``: no side is held to a NaN code.
    """
    if nan == ANY_NAN:
        return []
    out = []
    for name in (a, b):
        fixed = resolve_encoder(name, fmt, saturate, nan).fixed_nan
        if fixed is not None and fixed != nan:
            out.append((name, fixed))
    return out


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
    both_nan: npt.NDArray[np.bool_],
    policies: tuple[str, str],
    held_by: tuple[FormatSpec, bool],
) -> int:
    """Patterns where both sides emit NaN codes and a side's is not its held one."""
    held = [_held_codes(*held_by, policy) for policy in policies]
    bad = 0
    for sign, lo, hi in _sign_spans(start, codes[0].size):
        both = both_nan[lo:hi]
        if both.any():
            a, b = codes[0][lo:hi], codes[1][lo:hi]
            bad += int(np.count_nonzero(both & ((a != held[0][sign]) | (b != held[1][sign]))))
    return bad


def _first(mask: npt.NDArray[np.bool_], k: int) -> npt.NDArray[np.intp]:
    """The offsets of the first ``k`` true elements of ``mask``."""
    found: list[npt.NDArray[np.intp]] = []
    for lo in range(0, mask.size, _SCAN):
        found.append(np.flatnonzero(mask[lo : lo + _SCAN]) + lo)
        if sum(f.size for f in found) >= k:
            break
    return np.concatenate(found)[:k] if found else np.zeros(0, np.intp)


def _any_differ(a: Codes, b: Codes) -> bool:
    """Whether ``a`` and ``b`` differ anywhere, compared eight codes at a time."""
    if a.size % 8 or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return bool((a != b).any())
    return bool((a.reshape(-1).view(np.uint64) != b.reshape(-1).view(np.uint64)).any())


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
    """Classify where ``a``'s and ``b``'s codes for the patterns from ``start`` (``x``) differ."""
    codes_a, codes_b = codes
    any_differ = _any_differ(codes_a, codes_b)
    differ = codes_a != codes_b if any_differ else np.zeros(0, np.bool_)
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    examples: dict[str, list[dict[str, str]]] = {}

    def note(cls: str, count: int, first: npt.NDArray[np.intp]) -> None:
        by_class[cls] = count
        if count:
            examples[cls] = [
                {
                    "input": f"0x{start + int(i):08x}",
                    a: f"{codes_a[i]:#04x}",
                    b: f"{codes_b[i]:#04x}",
                }
                for i in first[:EXAMPLES_PER_CLASS]
            ]

    exempt = dict(exempt_sides(a, b, spec.name, saturate, nan))
    both_nan = np.zeros(0, np.bool_)
    if any_differ or exempt:
        both_nan = nan_code_mask(codes_a, spec)
        both_nan &= nan_code_mask(codes_b, spec)
    if any_differ:
        nan_hits = differ & both_nan
        first = _first(nan_hits, EXAMPLES_PER_CLASS)
        note(MISMATCH_CLASSES[0], int(np.count_nonzero(nan_hits)), first)
        rest = np.flatnonzero(differ & ~both_nan)
        if rest.size:
            classes = classify_mismatches(x[rest], codes_a[rest], codes_b[rest], spec)
            for k, cls in enumerate(MISMATCH_CLASSES[1:], start=1):
                hits = rest[classes == k]
                note(cls, int(hits.size), hits)
    if nan == ANY_NAN:  # every NaN code is the same NaN: none is held to one
        unexplained = 0
    elif exempt:
        policies = (exempt.get(a, nan), exempt.get(b, nan))
        held_by = (spec, saturate)
        unexplained = _nan_unexplained(start, (codes_a, codes_b), both_nan, policies, held_by)
    else:
        unexplained = by_class["nan_code"]
    hosts = [resolve_encoder(n, spec.name, saturate, nan).host for n in (a, b)]
    changed = tuple(change for host in hosts if host is not None for change in host.env_changes)
    read = tuple(host.fp_env_read for host in hosts if host is not None and host.fp_env_read)
    return ChunkResult(codes_a.size, by_class, examples, unexplained, start, "", changed, read)
