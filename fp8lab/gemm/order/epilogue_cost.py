"""What each epilogue order costs, in float32 ulps, against scaling the accumulator exactly.

For each shape and scale pair the G3 operands are drawn as G3 draws them;
every order in ``ACC_EPILOGUES`` (those that scale the accumulator) is applied by G3's model
(:func:`fp8lab.refs.gemm_model.model_output_bits`) to the sequential float32
accumulator ``acc``, and compared with ``RN_f32(s_in·s_w·acc)`` formed
exactly (``fractions.Fraction``, one rounding). The accumulation's own error
is the same in every row and cancels out: what remains is the epilogue's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fp8lab.gemm.population import G3Case, g3_operands
from fp8lab.gemm.scalar import round_fraction_f32
from fp8lab.gemm.ulp import ulp_distance
from fp8lab.refs.gemm_accumulators import sequential
from fp8lab.refs.gemm_model import ACC_EPILOGUES, decode_e4m3fn, model_output_bits

__all__ = ["EpilogueCost", "epilogue_order_cost"]


@dataclass(frozen=True)
class EpilogueCost:
    """One epilogue order over every shape and scale pair."""

    epilogue: str
    outputs: int
    off_exact: int
    max_ulps: int
    mean_ulps: float


def epilogue_order_cost(
    shapes: Sequence[tuple[int, int, int]], pairs: Sequence[tuple[float, float]], seed: int
) -> list[EpilogueCost]:
    """Per epilogue: outputs, how many differ from ``RN_f32(s_in·s_w·acc)``, by how many ulps."""
    ulps: dict[str, list[np.ndarray]] = {e: [] for e in ACC_EPILOGUES}
    for i, (m, n, k) in enumerate(shapes):
        for s_in, s_w in pairs:
            a, b = g3_operands(G3Case(m, n, k, seed + i, s_in, s_w, "f32"))
            acc = sequential(decode_e4m3fn(a), decode_e4m3fn(b))
            scale = Fraction(float(np.float32(s_in))) * Fraction(float(np.float32(s_w)))
            exact = np.array(
                [round_fraction_f32(scale * Fraction(float(v))) for v in acc.ravel()],
                np.float32,
            ).reshape(m, n)
            for e in ACC_EPILOGUES:
                got = model_output_bits(a, b, s_in, s_w, "f32", epilogue=e).view(np.float32)
                ulps[e].append(np.abs(ulp_distance(got, exact)).ravel())
    rows = []
    for e in ACC_EPILOGUES:
        d = np.concatenate(ulps[e])
        rows.append(EpilogueCost(e, d.size, int(np.sum(d != 0)), int(d.max()), float(d.mean())))
    return rows
