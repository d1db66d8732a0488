"""Figures of the GEMM notebook; each takes computed data and returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from fp8lab.gates.g3 import G3CaseStats
from fp8lab.studies.gemm_deviation import DeviationRow, ScaleDeviation

__all__ = [
    "plot_accumulation_deviation",
    "plot_bound_tightness",
    "plot_epilogue_deviation",
    "plot_error_ratios",
]


def plot_error_ratios(ratios: Mapping[str, np.ndarray]) -> Figure:
    """Histogram of log10(|error| / tight bound) per model; exact outputs left out."""
    fig = Figure(figsize=(7, 3.5), layout="constrained")
    ax = fig.add_subplot()
    bins = [float(v) for v in np.linspace(-8, 2, 61)]
    for name, r in ratios.items():
        nonzero = r[r > 0]
        label = f"{name} ({r.size - nonzero.size} exact)"
        ax.hist(np.log10(nonzero), bins=bins, histtype="step", label=label)
    ax.axvline(0.0, color="k", linestyle="--", linewidth=1)
    ax.set_xlabel("log10(|out - exact| / tight bound)")
    ax.set_ylabel("outputs")
    ax.legend(fontsize=6)
    return fig


def plot_bound_tightness(cases: Sequence[G3CaseStats]) -> Figure:
    """Per G3 case: worst error over the tight bound and over the seed's tolerance."""
    fig = Figure(figsize=(7, 3.5), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(cases))
    ax.bar(x - 0.2, [c.worst_ratio_tight for c in cases], 0.4, label="worst |err| / gamma_K bound")
    ax.bar(x + 0.2, [c.worst_ratio_seed for c in cases], 0.4, label="worst |err| / seed tolerance")
    ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(x, [c.name for c in cases], rotation=45, ha="right", fontsize=6)
    ax.legend(fontsize=7)
    return fig


def plot_epilogue_deviation(rows: Sequence[ScaleDeviation]) -> Figure:
    """Fraction of outputs whose bits differ, folded vs two-scalar, per scale pair."""
    fig = Figure(figsize=(6, 3.5), layout="constrained")
    ax = fig.add_subplot()
    for out, marker in (("f32", "o"), ("bf16", "x")):
        mine = [r for r in rows if r.out == out]
        ax.scatter(
            [r.s_in * r.s_w for r in mine], [r.fraction for r in mine], marker=marker, label=out
        )
    ax.set_xscale("log")
    ax.set_xlabel("s_in * s_w")
    ax.set_ylabel("fraction of outputs differing")
    ax.legend(fontsize=7)
    return fig


def plot_accumulation_deviation(rows: Sequence[DeviationRow]) -> Figure:
    """Fraction of outputs whose bits differ from sequential f32, per variant."""
    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.add_subplot()
    labels = [f"{r.comparison} [{r.operands}, {r.out}]" for r in rows]
    ax.barh(np.arange(len(rows)), [r.fraction for r in rows])
    ax.set_yticks(np.arange(len(rows)), labels, fontsize=6)
    ax.set_xlabel("fraction of outputs differing")
    ax.set_xlim(0, 1)
    return fig
