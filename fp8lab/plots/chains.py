"""Figures of the fused_chains notebook; each returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

__all__ = ["plot_rounding_cost"]


def plot_rounding_cost(totals: Mapping[str, tuple[int, int]]) -> Figure:
    """Per recipe: the share of its fp8 bytes that differ from the exact value rounded once.

    Args:
        totals: recipe -> (words compared, bytes that differ).
    """
    names = list(totals)
    share = np.array([100.0 * d / w if w else 0.0 for w, d in totals.values()])
    fig = Figure(figsize=(8, 0.35 * len(names) + 1.2), layout="constrained")
    ax = fig.add_subplot()
    ax.barh(range(len(names)), share)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    for i, (w, d) in enumerate(totals.values()):
        ax.annotate(
            f"{d:,} / {w:,}", (share[i], i), fontsize=7, xytext=(3, -3), textcoords="offset points"
        )
    ax.set_xlabel("% of e4m3fn bytes unlike the exact value rounded once (GF's population)")
    ax.set_title("what each recipe's rounding choices cost")
    return fig
