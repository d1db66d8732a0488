"""One chunk of several exhaustive proofs at once: each encoder side evaluated once.

Proofs of a plan often share a side: the scan reference for one format and
policy, or the fast codec, appears in several. :func:`compare_plan_chunk`
materialises the chunk's patterns once, hands every side one sealed copy of
them (:func:`fp8lab.runtime.guard.sealed_copy`; the comparison reads its own),
evaluates each distinct side once
(lazily, in plan order, so a side after a faulting one is not run, as in
:func:`fp8lab.sweeps.exhaustive_chunks.compare_chunk`) and compares every proof
from those codes. Each proof's :class:`ChunkResult` is the one ``compare_chunk``
returns for it.

A side is its encoder name, format, overflow policy and NaN policy; an encoder
with a fixed NaN policy (``fixed_nan``, :mod:`fp8lab.sweeps.encoders`) ignores
the one asked for, so its codes are shared across NaN policies. Only built-in
encoders share: a ``MODULE:FUNC`` encoder runs in its own process with its own
findings, and its proofs stay on :func:`fp8lab.sweeps.exhaustive.run_exhaustive`.

The saturating ml_dtypes side (:func:`fp8lab.refs.ml_dtypes_encode` with
``saturate=True``: ml_dtypes of ``np.clip(x, -max, max)``) is derived, when the
chunk already holds the same format's non-saturating ml_dtypes codes, by
:func:`saturated_ml_dtypes`; otherwise, and in
:func:`~fp8lab.sweeps.exhaustive.run_exhaustive`, it is evaluated as it is, the
slow twin of the derivation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.refs import ml_dtypes_encode
from fp8lab.runtime.guard import KernelFaultError, call_sealed, sealed_copy
from fp8lab.runtime.heap import keep_heap
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.encoders import BUILTIN_ENCODERS, resolve_encoder
from fp8lab.sweeps.exhaustive_chunks import ChunkResult, chunk_patterns, compare_codes, side_codes

__all__ = [
    "PlanProof",
    "Side",
    "compare_plan_chunk",
    "saturated_ml_dtypes",
    "shareable",
    "side_key",
]

PlanProof = tuple[str, str, str, bool, str]  # a, b, format, saturate, nan
Side = tuple[str, str, bool, str]  # encoder, format, saturate, nan (or "fixed")
Codes = npt.NDArray[np.uint8]

_MAGNITUDE = np.uint32(0x7FFF_FFFF)
_INF = np.uint32(0x7F80_0000)


def shareable(proof: PlanProof) -> bool:
    """True when both sides are built-in encoders, so their codes may be shared."""
    return proof[0] in BUILTIN_ENCODERS and proof[1] in BUILTIN_ENCODERS


def side_key(name: str, fmt: str, saturate: bool, nan: str) -> Side:
    """What ``name``'s codes depend on: the NaN policy only if the encoder honours it."""
    fixed = resolve_encoder(name, fmt, saturate, nan).fixed_nan
    return (name, fmt, saturate, nan if fixed is None else "fixed")


def saturated_ml_dtypes(x: npt.NDArray[np.float32], fmt: FormatSpec, plain: Codes) -> Codes:
    """``ml_dtypes_encode(x, fmt, saturate=True)`` from ``plain``, its non-saturating codes.

    The clip to ``±max`` (as float32) leaves every ``x`` with ``|x| <= max``
    bit for bit as it is, so there the codes are ``plain``'s; it turns every
    ``x > max`` (``+inf`` included) into ``+max`` exactly and every
    ``x < -max`` into ``-max``, so those take the saturating codes of ``±inf``.
    Only the NaN lanes are encoded again, clipped, as they are.

    Whole chunks in range, or out of it on one side, are told by ``min`` and
    ``max`` alone (a NaN fails every comparison, so it takes the lane-wise path).

    Raises:
        TypeError: for an ``x`` that is not float32.
    """
    if x.dtype != np.float32:
        raise TypeError(f"saturated_ml_dtypes needs float32, got {x.dtype}")
    if not x.size:
        return plain
    bound = np.asarray(float(fmt.max), np.float32)
    low, high = x.min(), x.max()
    if -bound <= low and high <= bound:
        return plain
    ends = ml_dtypes_encode(np.array([np.inf, -np.inf], np.float32), fmt, saturate=True)
    if low > bound or high < -bound:
        return np.full(x.shape, ends[0] if low > bound else ends[1], np.uint8)
    bits = x.view(np.uint32)
    magnitude = bits & _MAGNITUDE
    over = magnitude > bound.view(np.uint32)
    codes = plain.copy()
    np.copyto(codes, np.where(bits > _MAGNITUDE, ends[1], ends[0]), where=over)
    nan = magnitude > _INF
    if nan.any():
        lanes = np.flatnonzero(nan)
        codes[lanes] = ml_dtypes_encode(x[lanes], fmt, saturate=True)
    return codes


def _side(
    policy: tuple[str, str, bool, str],
    span: tuple[int, int],
    seen: np.ndarray,
    codes: dict[Side, Codes | str],
) -> Codes | str:
    """The codes of ``policy``'s side (name, format, saturate, nan) for the chunk ``span``.

    Derived by :func:`saturated_ml_dtypes` where ``codes`` holds the plain ones it
    needs, evaluated otherwise.
    """
    name, fmt, saturate, nan = policy
    plain = codes.get(side_key(name, fmt, False, nan)) if name == "ml_dtypes" and saturate else None
    if not isinstance(plain, np.ndarray):
        return side_codes(name, fmt, saturate, nan, *span, seen, sealed=True)
    try:
        return call_sealed(saturated_ml_dtypes, seen, get_format(fmt), plain)
    except KernelFaultError as exc:
        return exc.line(f"encoder {name!r}")


def compare_plan_chunk(
    proofs: tuple[PlanProof, ...], start: int, stop: int
) -> tuple[ChunkResult, ...]:
    """Each of ``proofs`` compared on the float32 patterns ``[start, stop)``, in order."""
    keep_heap()  # each chunk's arrays reuse the last one's pages (fp8lab.runtime.heap)
    x = chunk_patterns(start, stop)
    seen = sealed_copy(x)
    codes: dict[Side, Codes | str] = {}
    out = []
    for a, b, fmt, saturate, nan in proofs:
        spec = get_format(fmt)
        sides = []
        for name in (a, b):
            key = side_key(name, spec.name, saturate, nan)
            if key not in codes:
                codes[key] = _side((name, spec.name, saturate, nan), (start, stop), seen, codes)
            got = codes[key]
            if isinstance(got, str):
                out.append(ChunkResult(0, {}, {}, 0, start, got))
                break
            sides.append(got)
        else:
            out.append(compare_codes(a, b, spec, saturate, nan, start, x, (sides[0], sides[1])))
    return tuple(out)
