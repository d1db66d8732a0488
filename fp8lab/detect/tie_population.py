"""Tie populations: the complete exposing set at a scale plus near-miss controls.

The exposing inputs come from :func:`fp8lab.detect.enumerate_exposing`; the
controls are their ±1-pattern neighbours that do not expose, the words a
detector must not flag. The seed's 209 tie and ladder words
(:func:`fp8lab.populations.g1_population`) are scored against the complete set.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.detect.brute import Kernel
from fp8lab.detect.enumeration import enumerate_exposing
from fp8lab.detect.pair import quantize_codes, resolve_kernel
from fp8lab.detect.scales import as_scales
from fp8lab.populations import WordClass, g1_population

__all__ = ["SeedScore", "TiePopulation", "exposing_bits", "seed_scores", "tie_population"]


def exposing_bits(
    scale: float, a: Kernel = "reciprocal", b: Kernel = "divide", fmt: str = "e4m3fn"
) -> npt.NDArray[np.uint32]:
    """The complete exposing set at ``scale`` as ascending float32 patterns."""
    record = enumerate_exposing(scale, a, b, fmt=fmt)
    return np.array([int(v, 16) for v in record.inputs], np.uint32)


@dataclass(frozen=True, eq=False)
class TiePopulation:
    """Exposing words and non-exposing neighbour controls at one scale.

    Args:
        format: format name.
        scale: the float32 scale.
        exposing: float32 words that expose the pair (all of them).
        controls: float32 words one pattern away from an exposing word that do not.
    """

    format: str
    scale: float
    exposing: npt.NDArray[np.float32]
    controls: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        self.exposing.setflags(write=False)
        self.controls.setflags(write=False)

    @property
    def words(self) -> npt.NDArray[np.float32]:
        """Exposing words first, then controls."""
        return np.concatenate([self.exposing, self.controls])


def tie_population(
    scale: float, fmt: str = "e4m3fn", a: Kernel = "reciprocal", b: Kernel = "divide"
) -> TiePopulation:
    """Build the tie population of ``fmt`` at ``scale``.

    Raises:
        ValueError: for an invalid scale.
    """
    bits = exposing_bits(scale, a, b, fmt)
    near = np.unique(np.concatenate([bits - np.uint32(1), bits + np.uint32(1)]))
    near = np.setdiff1d(near, bits)
    x = near.view(np.float32)
    s = np.float32(scale)
    ka, kb = resolve_kernel(a, fmt), resolve_kernel(b, fmt)
    same = quantize_codes(ka, x, s) == quantize_codes(kb, x, s)
    return TiePopulation(fmt, float(s), bits.view(np.float32), x[same])


@dataclass(frozen=True)
class SeedScore:
    """How many of the complete exposing set the seed's structured words find."""

    scale: float
    scale_hex: str
    exposing: int
    seed_words: int
    seed_found: int
    seed_missed: int


def seed_scores(scales: Iterable[float]) -> list[SeedScore]:
    """Score the seed's 209 tie + ladder words (divide vs reciprocal, e4m3fn).

    Raises:
        ValueError: for an empty list or an invalid scale.
    """
    out = []
    for s in as_scales(scales):
        words = g1_population(float(s)).subset(WordClass.TIE, WordClass.LADDER).words
        exposing = exposing_bits(float(s))
        found = int(np.isin(words.view(np.uint32), exposing).sum())
        out.append(
            SeedScore(
                float(s),
                float(s).hex(),
                int(exposing.size),
                int(words.size),
                found,
                int(exposing.size) - found,
            )
        )
    return out
