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
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format

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


def _top_ulp(fmt: FormatSpec) -> Fraction:
    """The spacing of the format's largest binade."""
    return fmt.max - fmt.magnitude_value(fmt.max_code - 1)


def _saturation(fmt: FormatSpec) -> list[float]:
    """Overflow words: the seed's 600, 448.5, 1e4, 1e30 (both signs), 448, -448, 447 for e4m3fn.

    For another format the same places relative to its largest value: 4.875
    and 1/64 top spacings above it, 10^4 / 448 of it, 10^30; then it, its
    negation, and 1/32 of a spacing below it.
    """
    top, ulp = fmt.max, _top_ulp(fmt)
    if fmt.name == "e4m3fn":
        over = [Fraction(600), Fraction(897, 2), Fraction(10**4), Fraction(10**30)]
    else:
        over = [top + ulp * Fraction(39, 8), top + ulp / 64, top * 10**4 / 448, Fraction(10**30)]
    values: list[float] = []
    for v in over:
        values += [float(v), -float(v)]
    return [*values, float(top), -float(top), float(top - ulp / 32)]


def _ties(fmt: FormatSpec) -> list[float]:
    """Midpoints inside each binade from 2**(minexp + 2) up, both signs, then the overflow tie.

    e4m3fn: exponents -4..8, mantissas 0..6, 182 words (the seed's; the last,
    464, is its overflow tie). A format whose largest binade is full (e5m2)
    ends with the overflow tie, its largest value plus half a spacing.
    """
    values: list[float] = []
    steps = 1 << fmt.mantissa_bits
    top_exp = fmt.maxexp - 1
    for e in range(fmt.minexp + 2, top_exp + 1):
        for m in range(steps - 1):
            lo = (1 + Fraction(m, steps)) * Fraction(2) ** e
            hi = (1 + Fraction(m + 1, steps)) * Fraction(2) ** e
            mid = float((lo + hi) / 2)
            values += [mid, -mid]
    overflow = float(fmt.max + _top_ulp(fmt) / 2)
    if overflow not in values:
        values += [overflow, -overflow]
    return values


def _ladder(fmt: FormatSpec) -> list[float]:
    """The first nine subnormal steps and the midpoints after each (e4m3fn: 27 words)."""
    step = fmt.smallest_subnormal
    values: list[float] = []
    for m in range(9):
        values += [float(m * step), float((2 * m + 1) * step / 2), -float((2 * m + 1) * step / 2)]
    return values


@cache
def g1_structured_values(element: str = "e4m3fn") -> tuple[tuple[WordClass, float], ...]:
    """The unscaled structured values, in seed order, with their classes (computed once).

    e4m3fn: the seed's 223; another element format gets the same structure
    from its own fields (its ties, overflow, subnormal ladder).
    """
    fmt = get_format(element)
    zero = [0.0, -0.0, float(fmt.smallest_subnormal / 8)]
    groups = (
        (WordClass.SATURATION, _saturation(fmt)),
        (WordClass.TIE, _ties(fmt)),
        (WordClass.LADDER, _ladder(fmt)),
        (WordClass.ZERO, zero),
    )
    return tuple((cls, v) for cls, values in groups for v in values)


def g1_population(
    scale: float, *, seed: int = G1_SEED, special: bool = True, element: str = "e4m3fn"
) -> Population:
    """The G1 words at ``scale``: random words, the structured ones, then the special ones.

    Args:
        scale: the static scale; structured words are float32(v) * float32(scale).
        seed: seed of the uniform [-2, 2] words.
        special: append ±NaN and ±inf (fp8lab's strengthening of the seed's set).
        element: the format the structured words are placed for (the seed's: e4m3fn).
    """
    rng = np.random.default_rng(seed)
    random_words = rng.uniform(-2.0, 2.0, G1_RANDOM_WORDS).astype(np.float32)
    structured = g1_structured_values(element)
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
    tag = "" if element == "e4m3fn" else f", {element}"
    return Population(f"g1(s={float(s)!r}, seed={seed}{tag})", words, classes)
