"""The preserved deviations, measured: epilogues and accumulation orders.

Each study computes two outputs from the same operands and counts the
outputs whose bits differ and the worst ulp distance, for f32 and bf16 out:

* folded alpha ``f32(f32(s_in·s_w)·acc)`` against upstream's two scalars
  ``f32(s_in·f32(s_w·acc))``, over many scale pairs and shapes;
* sequential float32 against FMA, pairwise, split-K and fast accumulation.

fp8 operands come from the G3 population (``g3_operands``); FMA is also
measured on float32 operands, since for fp8 ones it cannot differ
Errors against the exact product are in units of the
tight bound (``fp8lab.refs.gemm_bounds``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from fp8lab.gates.ulp import bits_differ, ulp_distance
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_model import decode_operands
from fp8lab.kernels.matmul_models import (
    AccumulatorModel,
    fast_accum,
    pairwise,
    sequential,
    sequential_fma,
    split_k,
)
from fp8lab.kernels.matmul_protocol import MatmulSpec
from fp8lab.populations.gemm import G3Case, g3_operands
from fp8lab.refs.gemm_bounds import tight_bound
from fp8lab.refs.gemm_exact import seed_reference

__all__ = [
    "ACCUMULATION_VARIANTS",
    "DeviationRow",
    "RatioSummary",
    "ScaleDeviation",
    "accumulation_deviation",
    "epilogue_by_scale",
    "epilogue_deviation",
    "error_ratios",
    "ratio_summary",
    "scale_pairs",
]

Shape = tuple[int, int, int]
_FOLDED, _TWO = MatmulSpec(), MatmulSpec(epilogue="two_scalar")

ACCUMULATION_VARIANTS: dict[str, AccumulatorModel] = {
    "sequential_fma": sequential_fma,
    "pairwise": pairwise,
    "split_k_64": partial(split_k, block=64),
    "split_k_256": partial(split_k, block=256),
    "fast_accum_e8m13_trunc_128": partial(fast_accum, mantissa_bits=13, interval=128),
    "fast_accum_e8m13_rne_128": partial(fast_accum, mantissa_bits=13, rounding="rne"),
    "fast_accum_e8m13_trunc_never": partial(fast_accum, mantissa_bits=13, interval=None),
}


@dataclass(frozen=True)
class DeviationRow:
    """One comparison over many outputs: how many bits differ and by how much."""

    comparison: str
    operands: str
    out: str
    outputs: int
    differing: int
    fraction: float
    max_ulp: int
    worst_case: str  # the scale pair or shape with the most differing bits; "" if none


@dataclass(frozen=True)
class ScaleDeviation:
    """Folded against two-scalar epilogue at one scale pair, over all shapes."""

    s_in: float
    s_w: float
    out: str
    outputs: int
    differing: int
    fraction: float
    max_ulp: int


def scale_pairs(count: int, seed: int) -> list[tuple[float, float]]:
    """The seed's scale pairs, then ``count`` pairs log-uniform in [1e-3, 1]."""
    rng = np.random.default_rng(seed)
    drawn = 10.0 ** rng.uniform(-3.0, 0.0, (count, 2))
    pairs = [(0.035, 0.017), (0.041, 0.0092), (1.0, 1.0)]
    return pairs + [(float(np.float32(i)), float(np.float32(w))) for i, w in drawn]


def _accumulators(shapes: Sequence[Shape], seed: int) -> list[tuple[str, np.ndarray]]:
    out = []
    for i, (m, n, k) in enumerate(shapes):
        a, b = g3_operands(G3Case(m, n, k, seed + i, 0.035, 0.017, "f32"))
        out.append((f"{m}x{n}x{k}", sequential(*decode_operands(a, b))))
    return out


def _compare(got: np.ndarray, want: np.ndarray) -> tuple[int, int, int]:
    return got.size, int(bits_differ(got, want).sum()), int(ulp_distance(got, want).max())


def epilogue_by_scale(
    shapes: Sequence[Shape], pairs: Sequence[tuple[float, float]], seed: int
) -> list[ScaleDeviation]:
    """Folded vs two-scalar epilogue, one row per scale pair and output dtype."""
    accs = _accumulators(shapes, seed)
    rows = []
    for s_in, s_w in pairs:
        si, sw = np.float32(s_in), np.float32(s_w)
        for out in ("f32", "bf16"):
            size = differ = worst = 0
            for _, acc in accs:
                n, d, u = _compare(
                    apply_epilogue(acc, si, sw, out, _TWO),
                    apply_epilogue(acc, si, sw, out, _FOLDED),
                )
                size, differ, worst = size + n, differ + d, max(worst, u)
            rows.append(ScaleDeviation(s_in, s_w, out, size, differ, differ / size, worst))
    return rows


def epilogue_deviation(rows: Sequence[ScaleDeviation]) -> list[DeviationRow]:
    """Summarise :func:`epilogue_by_scale` per output dtype; the worst pair named."""
    summary = []
    for out in ("f32", "bf16"):
        mine = [r for r in rows if r.out == out]
        worst = max(mine, key=lambda r: (r.fraction, r.max_ulp))
        size, differ = sum(r.outputs for r in mine), sum(r.differing for r in mine)
        summary.append(
            DeviationRow(
                "folded vs two_scalar", "fp8", out, size, differ, differ / size,
                max(r.max_ulp for r in mine),
                f"s_in={_scale(worst.s_in)} s_w={_scale(worst.s_w)}" if differ else "",
            )
        )  # fmt: skip
    return summary


def _scale(value: float) -> str:
    """A scale in prose: 6 significant digits, then its exact hex: ``0.0351542 (0x1.1ffb9cp-5)``."""
    mantissa, exponent = float(value).hex().split("p")
    return f"{value:.6g} ({mantissa.rstrip('0').rstrip('.')}p{exponent})"


def _float32_operands(m: int, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    return a, rng.standard_normal((n, k)).astype(np.float32)


def accumulation_deviation(
    shapes: Sequence[Shape],
    seed: int,
    variants: Sequence[str] = tuple(ACCUMULATION_VARIANTS),
    scales: tuple[float, float] = (0.035, 0.017),
) -> list[DeviationRow]:
    """Each accumulation variant against sequential float32, folded epilogue.

    FMA is measured on fp8 operands and on float32 normal ones.
    """
    si, sw = np.float32(scales[0]), np.float32(scales[1])
    operand_sets: list[tuple[str, str, Callable[[], tuple[np.ndarray, np.ndarray]]]] = []
    for i, (m, n, k) in enumerate(shapes):
        case = G3Case(m, n, k, seed + i, scales[0], scales[1], "f32")
        label = f"{m}x{n}x{k}"
        operand_sets.append(
            ("fp8", label, partial(lambda c: decode_operands(*g3_operands(c)), case))
        )
        operand_sets.append(("float32", label, partial(_float32_operands, m, n, k, seed + i)))
    stats: dict[tuple[str, str, str], list[tuple[int, int, int, str]]] = {}
    for kind, label, make in operand_sets:
        a, b = make()
        base = sequential(a, b)
        for name in variants:
            if kind == "float32" and name != "sequential_fma":
                continue
            acc = ACCUMULATION_VARIANTS[name](a, b)
            for out in ("f32", "bf16"):
                got = apply_epilogue(acc, si, sw, out, _FOLDED)
                want = apply_epilogue(base, si, sw, out, _FOLDED)
                stats.setdefault((name, kind, out), []).append((*_compare(got, want), label))
    rows = []
    for (name, kind, out), parts in stats.items():
        size, differ = sum(p[0] for p in parts), sum(p[1] for p in parts)
        worst = max(parts, key=lambda p: (p[2], p[1]))
        rows.append(
            DeviationRow(
                f"{name} vs sequential", kind, out, size, differ, differ / size,
                max(p[2] for p in parts), worst[3] if differ else "",
            )
        )  # fmt: skip
    return rows


def error_ratios(case: G3Case, models: dict[str, AccumulatorModel]) -> dict[str, np.ndarray]:
    """Per model, ``|out - want| / tight bound`` for every output of ``case``."""
    a_codes, b_codes = g3_operands(case)
    ref = seed_reference(a_codes, b_codes, case.s_in, case.s_w, case.out)
    bound = tight_bound(ref.abs_sum, ref.want, ref.alpha, case.k, bf16_output=case.out == "bf16")
    a, b = decode_operands(a_codes, b_codes)
    si, sw = np.float32(case.s_in), np.float32(case.s_w)
    ratios = {}
    for name, model in models.items():
        out = apply_epilogue(model(a, b), si, sw, case.out, _FOLDED)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios[name] = (np.abs(out.astype(np.float64) - ref.want) / bound).reshape(-1)
    return ratios


@dataclass(frozen=True)
class RatioSummary:
    """One model's errors in units of the tight bound, over one case's outputs."""

    model: str
    outputs: int
    exact: int
    within_bound: int
    median_ratio: float
    max_ratio: float


def ratio_summary(ratios: dict[str, np.ndarray]) -> list[RatioSummary]:
    """Summarise :func:`error_ratios`, one row per model."""
    return [
        RatioSummary(
            name,
            r.size,
            int((r == 0).sum()),
            int((r <= 1).sum()),
            float(np.median(r)),
            float(r.max()),
        )
        for name, r in ratios.items()
    ]
