"""Detector design: few words that kill a mutant kernel at several scales.

Given a reference kernel a and a mutant b, candidate scales, a margin k and a
budget of scales, pick ``budget`` scales where b differs from a on at least k
inputs, and a word set on which b fails on at least k words at every chosen
scale. Exposing sets of different scales rarely share words, so the greedy
multicover below is usually at its lower bound of k words per scale; the
lower bound ``ceil(k * scales / max sharing)`` is recorded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.detect.brute import Kernel
from fp8lab.detect.pair import kernel_name, quantize_codes, resolve_kernel
from fp8lab.detect.scales import as_scales
from fp8lab.detect.tie_population import exposing_bits

__all__ = ["Detector", "design_detector"]


@dataclass(frozen=True, eq=False)
class Detector:
    """Golden words and the reference bytes at each chosen scale.

    Args:
        format: format name.
        reference: the reference kernel's name.
        mutant: the mutant kernel's name.
        margin: k, the words the mutant must fail on at every scale.
        scales: chosen float32 scales, shape (S,).
        inputs: float32 words, shape (N,), used at every scale.
        expected: reference codes, shape (S, N).
        failing: words on which the mutant fails, per scale, shape (S,).
        lower_bound: a lower bound on N for this choice of scales.
    """

    format: str
    reference: str
    mutant: str
    margin: int
    scales: npt.NDArray[np.float32]
    inputs: npt.NDArray[np.float32]
    expected: npt.NDArray[np.uint8]
    failing: npt.NDArray[np.int64]
    lower_bound: int

    def __post_init__(self) -> None:
        for a in (self.scales, self.inputs, self.expected, self.failing):
            a.setflags(write=False)


def _choose_scales(sets: dict[float, set[int]], budget: int) -> list[float]:
    owners: dict[int, int] = {}
    for words in sets.values():
        for w in words:
            owners[w] = owners.get(w, 0) + 1
    shared = {s: sum(owners[w] > 1 for w in words) for s, words in sets.items()}
    ranked = sorted(sets, key=lambda s: (-shared[s], -len(sets[s]), s))
    return sorted(ranked[:budget])


def _multicover(sets: dict[float, set[int]], k: int) -> list[int]:
    need = dict.fromkeys(sets, k)
    chosen: list[int] = []
    pool = set().union(*sets.values())
    while any(need.values()):
        best = max(sorted(pool), key=lambda w: sum(need[s] > 0 for s in sets if w in sets[s]))
        chosen.append(best)
        pool.discard(best)
        for s in sets:
            if best in sets[s] and need[s]:
                need[s] -= 1
    return sorted(chosen)


def design_detector(
    scales: Iterable[float],
    *,
    margin: int,
    budget: int,
    a: Kernel = "reciprocal",
    b: Kernel = "divide",
    fmt: str = "e4m3fn",
) -> Detector:
    """Choose ``budget`` scales and the fewest words that make ``b`` fail ``margin`` times each.

    Args:
        scales: candidate scales.
        margin: k >= 1.
        budget: number of scales the detector must cover, >= 1.
        a: reference kernel.
        b: mutant kernel.
        fmt: format.

    Raises:
        ValueError: for bad margin or budget, no scales, or fewer than ``budget``
            candidate scales where ``b`` is exposed on at least ``margin`` inputs.
        AssertionError: if the built words do not kill ``b`` as designed.
    """
    if margin < 1 or budget < 1:
        raise ValueError(f"margin and budget must be >= 1, got {margin} and {budget}")
    candidates = as_scales(scales)
    sets = {float(s): set(exposing_bits(float(s), a, b, fmt).tolist()) for s in candidates}
    eligible = {s: w for s, w in sets.items() if len(w) >= margin}
    if len(eligible) < budget:
        raise ValueError(
            f"only {len(eligible)} of {len(sets)} scales expose {kernel_name(b)!r} on "
            f">= {margin} inputs; budget {budget} cannot be met"
        )
    chosen = _choose_scales(eligible, budget)
    picked = {s: eligible[s] for s in chosen}
    words = np.array(_multicover(picked, margin), np.uint32).view(np.float32)
    ka, kb = resolve_kernel(a, fmt), resolve_kernel(b, fmt)
    s32 = np.array(chosen, np.float32)
    expected = np.stack([quantize_codes(ka, words, s) for s in s32])
    failing = np.array(
        [(quantize_codes(kb, words, s) != e).sum() for s, e in zip(s32, expected, strict=True)]
    )
    if (failing < margin).any():
        raise AssertionError(f"designed words fail the mutant only {failing.tolist()} times")
    most = max(sum(w in picked[s] for s in picked) for w in set().union(*picked.values()))
    return Detector(
        fmt,
        kernel_name(ka),
        kernel_name(kb),
        margin,
        s32,
        words,
        expected,
        failing.astype(np.int64),
        math.ceil(margin * budget / most),
    )
