"""The seed's detector table: divide vs reciprocal on the 209 tie + ladder words.

Published in vllm.cpp PR #842: 0.0092 exposes 24, 0.13
exposes 78, 0.77 exposes 82; 1.0, 0.5, 0.035 and 7.25 expose 0; bf16 input
exposes nothing at any scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from fp8lab.populations import G1_SEED, WordClass, g1_population
from fp8lab.refs import reference_quant_static

__all__ = ["SEED_DETECTOR_COUNTS", "DetectorRow", "detector_counts"]

SEED_DETECTOR_COUNTS = {1.0: 0, 0.5: 0, 0.035: 0, 0.0092: 24, 7.25: 0, 0.13: 78, 0.77: 82}


@dataclass(frozen=True)
class DetectorRow:
    """Exposing words at one scale, for float32 and bfloat16 input."""

    scale: float
    words: int
    exposed_float32: int
    exposed_bfloat16: int
    published: int | None


def _exposed(words: np.ndarray, scale: float) -> int:
    s = np.float32(scale)
    divided = reference_quant_static(words / s, 1.0)
    return int((divided != reference_quant_static(words, s)).sum())


def detector_counts(scales: Sequence[float], *, seed: int = G1_SEED) -> list[DetectorRow]:
    """Count the tie + ladder words where x/s and x*(1/s) encode differently.

    Raises:
        ValueError: for an empty scale list.
    """
    if not scales:
        raise ValueError("no scales to measure")
    rows = []
    for scale in scales:
        words = g1_population(scale, seed=seed).subset(WordClass.TIE, WordClass.LADDER).words
        bf16 = words.astype(ml_dtypes.bfloat16).astype(np.float32)
        rows.append(
            DetectorRow(
                scale,
                int(words.size),
                _exposed(words, scale),
                _exposed(bf16, scale),
                SEED_DETECTOR_COUNTS.get(scale),
            )
        )
    return rows
