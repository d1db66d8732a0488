"""The seed's G1 population (vllm.cpp tests/vt/test_ops_fp8_cpu.cpp).

Per scale s, 4319 words: 4096 uniform [-2, 2] values (not scaled), 11
saturation words, 182 tie words (the e4m3fn midpoints of exponents -4..8 and
mantissas 0..6, both signs, times s), a 27-word subnormal ladder and three zero
words. Structured words are float32(v) * float32(s), rounded once in float32.
The random values match the seed by structure, not by stream: the C++ used
mt19937, this uses ``numpy.random.default_rng(seed)``.

fp8lab adds four special words, +NaN, -NaN, +inf and -inf (``special=True``,
the default), so that G1 also checks the kernel's stated NaN policy; the
seed's population has no NaN and let NaN-policy mutants survive. With
``special=False`` the population is the seed's 4319 words exactly.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np

from fp8lab.populations.words import Population, WordClass

__all__ = [
    "G1_RANDOM_WORDS",
    "G1_SEED",
    "G1_SPECIAL_WORDS",
    "G1_WORDS",
    "g1_population",
    "g1_structured_values",
]

G1_SEED = 1234
G1_RANDOM_WORDS = 4096
G1_SPECIAL_WORDS = (float("nan"), -float("nan"), float("inf"), -float("inf"))
G1_WORDS = 4319 + len(G1_SPECIAL_WORDS)


def _saturation() -> list[float]:
    values: list[float] = []
    for v in (600.0, 448.5, 1e4, 1e30):
        values += [v, -v]
    return [*values, 448.0, -448.0, 447.0]


def _ties() -> list[float]:
    values: list[float] = []
    for e in range(-4, 9):
        for m in range(7):
            lo = (1 + Fraction(m, 8)) * Fraction(2) ** e
            hi = (1 + Fraction(m + 1, 8)) * Fraction(2) ** e
            mid = float((lo + hi) / 2)
            values += [mid, -mid]
    return values


def _ladder() -> list[float]:
    values: list[float] = []
    for m in range(9):
        values += [m / 512, (2 * m + 1) / 1024, -(2 * m + 1) / 1024]
    return values


@cache
def g1_structured_values() -> tuple[tuple[WordClass, float], ...]:
    """The 223 unscaled structured values, in seed order, with their classes (computed once)."""
    zero = [0.0, -0.0, 1 / 4096]
    groups = (
        (WordClass.SATURATION, _saturation()),
        (WordClass.TIE, _ties()),
        (WordClass.LADDER, _ladder()),
        (WordClass.ZERO, zero),
    )
    return tuple((cls, v) for cls, values in groups for v in values)


def g1_population(scale: float, *, seed: int = G1_SEED, special: bool = True) -> Population:
    """The G1 words at ``scale``: random words, the structured ones, then the special ones.

    Args:
        scale: the static scale; structured words are float32(v) * float32(scale).
        seed: seed of the uniform [-2, 2] words.
        special: append ±NaN and ±inf (fp8lab's strengthening of the seed's set).
    """
    rng = np.random.default_rng(seed)
    random_words = rng.uniform(-2.0, 2.0, G1_RANDOM_WORDS).astype(np.float32)
    structured = g1_structured_values()
    s = np.float32(scale)
    with np.errstate(over="ignore"):  # at large scales 1e30 * s is inf in float32, as in C++
        scaled = np.array([v for _, v in structured], np.float32) * s
    extra = np.array(G1_SPECIAL_WORDS if special else (), np.float32)
    words = np.concatenate([random_words, scaled.astype(np.float32), extra])
    classes = (
        (WordClass.RANDOM,) * G1_RANDOM_WORDS
        + tuple(c for c, _ in structured)
        + (WordClass.SPECIAL,) * extra.size
    )
    return Population(f"g1(s={float(s)!r}, seed={seed})", words, classes)
