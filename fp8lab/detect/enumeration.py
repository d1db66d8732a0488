"""Exact enumeration: the complete exposing set at a scale without brute force.

Only the inputs in the candidate windows around ``±m*s`` for every midpoint m
can expose the pair (derivation in :mod:`fp8lab.detect.windows`); each is run
through both kernels. About 5000 candidates per scale instead of 2**32. The
completeness argument holds for kernel pairs that compute ``fl(x/s)`` and
``fl(x*fl(1/s))`` (or anything within 2u + u**2 of x/s) and then encode with
saturating RNE, i.e. for the built-in ``reciprocal`` / ``divide`` kernels. For any
other pair the record says ``complete=False``: the set may miss inputs, and
:func:`brute_force` is the method that finds them all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fp8lab.detect.brute import Kernel
from fp8lab.detect.midpoints import midpoint_table
from fp8lab.detect.pair import (
    is_builtin_pair_kernel,
    kernel_name,
    quantize_codes,
    resolve_kernel,
)
from fp8lab.detect.records import ExposureRecord, classify_inputs
from fp8lab.detect.windows import SIGN, candidate_windows, window_bits
from fp8lab.kernels import validate_scale
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.range_run import ALL_PATTERNS

__all__ = [
    "benchmark_enumeration",
    "candidate_inputs",
    "enumerate_exposing",
    "enumeration_is_complete",
]


def candidate_inputs(scale: float, fmt: str = "e4m3fn") -> npt.NDArray[np.uint32]:
    """Every float32 pattern (both signs) in a candidate window, ascending.

    Raises:
        ValueError: for an invalid scale.
    """
    s = validate_scale(scale)
    first, count = candidate_windows(np.array([s], np.float32), midpoint_table(fmt).values)
    bits, valid = window_bits(first, count)
    positive = np.unique(bits[valid])
    return np.unique(np.concatenate([positive, positive | SIGN]))


def enumeration_is_complete(a: Kernel, b: Kernel) -> bool:
    """Whether the window argument proves the enumeration complete for ``a`` vs ``b``.

    It models exactly the built-in pair (``fl(x/s)`` and ``fl(x*fl(1/s))``, then
    saturating RNE); a user kernel can differ anywhere, e.g. only at x = 1.0.
    """
    return is_builtin_pair_kernel(a) and is_builtin_pair_kernel(b)


def enumerate_exposing(
    scale: float,
    a: Kernel = "reciprocal",
    b: Kernel = "divide",
    *,
    fmt: str = "e4m3fn",
    start: int = 0,
    stop: int = ALL_PATTERNS,
) -> ExposureRecord:
    """The exposing inputs of ``a`` vs ``b`` at ``scale`` in ``[start, stop)``, by enumeration.

    Complete (``record.complete``) only for the built-in pair; see
    :func:`enumeration_is_complete`.

    Why the windows suffice (full derivation in :mod:`fp8lab.detect.windows`):
    |fl(x/s) - x/s| <= u|x/s| and |fl(x*fl(1/s)) - x/s| <= (2u + u**2)|x/s|,
    u = 2**-24, so the two results are within about 3 float32 ulps of each
    other. Saturating RNE only changes code across a midpoint m, so a
    differing pair needs m between them, hence x/s in m[1 - 3u, 1 + 3u] and
    x in ms[1 - 3u, 1 + 3u]; the windows take ms[1 - 4u, 1 + 4u] plus one
    pattern either side, for every midpoint (subnormal ones, the 2**-10 tie
    and the saturation tie included) and both signs.

    Args:
        scale: the static scale (validated, used as float32).
        a: reference kernel (name or object).
        b: the other kernel.
        fmt: format.
        start: first bit pattern considered.
        stop: one past the last.

    Raises:
        ValueError: for an invalid scale or an empty pattern range, or when no
            candidate falls in the range (an enumeration that examined nothing).
        KernelError: for an unresolvable kernel.
        KernelFaultError: if a kernel raised, exited or returned no uint8 codes of
            x's shape.
    """
    t0 = time.perf_counter()
    s = validate_scale(scale)
    if not 0 <= start < stop <= ALL_PATTERNS:
        raise ValueError(f"pattern range [{start:#x}, {stop:#x}) is empty or outside 2**32")
    spec = get_format(fmt)
    ka, kb = resolve_kernel(a, spec.name), resolve_kernel(b, spec.name)
    bits = candidate_inputs(float(s), spec.name)
    bits = bits[(bits >= start) & (bits < stop)] if (start, stop) != (0, ALL_PATTERNS) else bits
    if bits.size == 0:
        raise ValueError(f"no candidate input in [{start:#x}, {stop:#x}) at scale {float(s)!r}")
    x = bits.view(np.float32)
    exposing = bits[quantize_codes(ka, x, s) != quantize_codes(kb, x, s)]
    return ExposureRecord(
        method="enumerate",
        a=kernel_name(ka),
        b=kernel_name(kb),
        format=spec.name,
        scale=float(s),
        scale_hex=float(s).hex(),
        start=start,
        stop=stop,
        examined=int(bits.size),
        count=int(exposing.size),
        inputs=tuple(f"0x{int(v):08x}" for v in exposing),
        classes=classify_inputs(exposing, s, midpoint_table(spec.name)),
        wall_seconds=round(time.perf_counter() - t0, 6),
        complete=enumeration_is_complete(a, b),
    )


def benchmark_enumeration(scales: Sequence[float], *, repeat: int = 3) -> dict[str, float]:
    """Best-of-``repeat`` seconds per scale of :func:`enumerate_exposing` (reciprocal vs divide).

    Raises:
        ValueError: for an empty scale list or an invalid scale.
    """
    if not scales:
        raise ValueError("no scales to benchmark")
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for s in scales:
            enumerate_exposing(s)
        best = min(best, time.perf_counter() - t0)
    return {"scales": float(len(scales)), "seconds_per_scale": best / len(scales)}
