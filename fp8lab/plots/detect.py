"""Figures of the detector and sweep notebooks; each returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from fp8lab.detect import SweepRecord

__all__ = ["plot_count_distribution", "plot_exposable_midpoints", "plot_strength_vs_scale"]


def plot_strength_vs_scale(record: SweepRecord, marks: Mapping[float, int]) -> Figure:
    """Exposing inputs per scale against log2(scale), with named scales marked."""
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    log_s = np.log2(record.scales.astype(np.float64))
    ax.plot(log_s, record.columns["count"], ",", alpha=0.5, rasterized=True)  # 10**5 points
    for scale, count in marks.items():
        ax.plot(np.log2(scale), count, "o", ms=4)
        ax.annotate(
            repr(scale),
            (np.log2(scale), count),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    ax.set_xlabel("log2(scale)")
    ax.set_ylabel("exposing float32 inputs")
    ax.set_title(f"divide vs reciprocal: detector strength over {record.scales.size} scales")
    return fig


def plot_count_distribution(record: SweepRecord) -> Figure:
    """Histogram of the exposing count over the swept scales."""
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.add_subplot()
    counts = record.columns["count"]
    ax.hist(counts, bins=list(range(0, int(counts.max()) + 5, 4)))
    ax.set_xlabel("exposing inputs at a scale")
    ax.set_ylabel("scales")
    ax.set_title(f"{int((counts == 0).sum())} of {counts.size} scales expose nothing")
    return fig


def plot_exposable_midpoints(record: SweepRecord) -> Figure:
    """At how many swept scales each midpoint has an exposing input."""
    fig = Figure(figsize=(8, 3), layout="constrained")
    ax = fig.add_subplot()
    ax.bar(np.log2(record.midpoints), record.scales_exposing_midpoint, width=0.1)
    ax.set_xlabel("log2(positive midpoint)")
    ax.set_ylabel("scales exposing it")
    never = int((record.scales_exposing_midpoint == 0).sum())
    ax.set_title(f"which midpoints are exposable ({never} of {record.midpoints.size} never are)")
    return fig
