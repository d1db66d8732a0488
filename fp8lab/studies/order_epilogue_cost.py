"""What each epilogue order costs, in float32 ulps, against scaling the accumulator exactly.

For each shape and scale pair the G3 operands are drawn as G3 draws them;
every order in ``ACC_EPILOGUES`` (those that scale the accumulator), with
each intermediate rounding in ``INTERMEDIATES``, is applied by G3's model
(:func:`fp8lab.refs.gemm_model.model_output_bits`) to the sequential float32
accumulator ``acc``, and compared with ``RN_f32(s_in·s_w·acc)`` formed
exactly (``fractions.Fraction``, one rounding). The accumulation's own error
is the same in every row and cancels out: what remains is the epilogue's.
The ``exact`` intermediate must cost nothing: its rows check G3's one-rounding
path against the ``Fraction`` one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fp8lab.gates.ulp import ulp_distance
from fp8lab.populations.gemm import G3Case, g3_operands
from fp8lab.refs.gemm_accumulators import sequential
from fp8lab.refs.gemm_model import (
    ACC_EPILOGUES,
    INTERMEDIATES,
    decode_e4m3fn,
    model_output_bits,
)
from fp8lab.refs.gemm_scalar import round_fraction_f32

__all__ = ["EpilogueCost", "epilogue_order_cost"]


@dataclass(frozen=True)
class EpilogueCost:
    """One epilogue order and intermediate rounding over every shape and scale pair."""

    epilogue: str
    intermediate: str
    outputs: int
    off_exact: int
    max_ulps: int
    mean_ulps: float


def epilogue_order_cost(
    shapes: Sequence[tuple[int, int, int]], pairs: Sequence[tuple[float, float]], seed: int
) -> list[EpilogueCost]:
    """Per epilogue and intermediate: outputs, how many differ from ``RN_f32(s_in·s_w·acc)``."""
    choices = [(e, i) for e in ACC_EPILOGUES for i in INTERMEDIATES]
    ulps: dict[tuple[str, str], list[np.ndarray]] = {c: [] for c in choices}
    for i, (m, n, k) in enumerate(shapes):
        for s_in, s_w in pairs:
            a, b = g3_operands(G3Case(m, n, k, seed + i, s_in, s_w, "f32"))
            acc = sequential(decode_e4m3fn(a), decode_e4m3fn(b))
            scale = Fraction(float(np.float32(s_in))) * Fraction(float(np.float32(s_w)))
            exact = np.array(
                [round_fraction_f32(scale * Fraction(float(v))) for v in acc.ravel()],
                np.float32,
            ).reshape(m, n)
            for e, rnd in choices:
                got = model_output_bits(a, b, s_in, s_w, "f32", epilogue=e, intermediate=rnd)
                ulps[e, rnd].append(np.abs(ulp_distance(got.view(np.float32), exact)).ravel())
    rows = []
    for e, rnd in choices:
        d = np.concatenate(ulps[e, rnd])
        rows.append(
            EpilogueCost(e, rnd, d.size, int(np.sum(d != 0)), int(d.max()), float(d.mean()))
        )
    return rows
