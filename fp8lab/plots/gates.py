"""Figures of the gate notebooks; each takes computed data and returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from fp8lab.gates import GateResult

__all__ = ["plot_class_mismatches", "plot_detector_counts"]


def plot_class_mismatches(result: GateResult) -> Figure:
    """Mismatched words per case and word class for one gate result."""
    fig = Figure(figsize=(7, 3), layout="constrained")
    ax = fig.add_subplot()
    names = [c.name for c in result.case_results]
    ax.bar(range(len(names)), [c.mismatches for c in result.case_results])
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("mismatched words")
    ax.set_title(f"{result.gate} on {result.kernel}: {result.status.value}")
    return fig


def plot_detector_counts(measured: Mapping[float, int], published: Mapping[float, int]) -> Figure:
    """Words exposing divide-vs-reciprocal per scale: measured here against the seed."""
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.add_subplot()
    scales = sorted(measured)
    x = np.arange(len(scales))
    ax.bar(x - 0.2, [measured[s] for s in scales], 0.4, label="measured")
    ax.bar(x + 0.2, [published.get(s, 0) for s in scales], 0.4, label="seed PR #842")
    ax.set_xticks(x, [repr(s) for s in scales])
    ax.set_xlabel("scale")
    ax.set_ylabel("exposing words of 209")
    ax.legend(fontsize=7)
    return fig
