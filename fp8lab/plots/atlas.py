"""Figures of the codec atlas; each takes computed data and returns a Figure."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from fp8lab.studies.atlas import Boundary, CodeRow

__all__ = ["plot_boundaries", "plot_codes"]


def plot_codes(name: str, rows: Sequence[CodeRow]) -> Figure:
    """Every code against its value (symmetric log scale); NaN codes marked."""
    fig = Figure(figsize=(7, 3.2), layout="constrained")
    ax = fig.add_subplot()
    finite = [r for r in rows if r.value is not None and np.isfinite(r.value)]
    kinds = {"zero": "k", "subnormal": "tab:orange", "normal": "tab:blue"}
    for kind, color in kinds.items():
        pts = [r for r in finite if r.kind == kind]
        values = [r.value for r in pts if r.value is not None]
        ax.scatter([r.code for r in pts], values, s=6, c=color, label=kind)
    for r in rows:
        if r.kind in ("nan", "inf"):
            ax.axvline(r.code, color="tab:red" if r.kind == "nan" else "tab:purple", lw=0.6)
    smallest = float(min(abs(r.value) for r in finite if r.value))
    ax.set_yscale("symlog", linthresh=smallest)
    largest = float(max(abs(r.value) for r in finite if r.value))
    ticks, labels = _symlog_ticks(smallest, largest)
    ax.set_yticks(ticks, labels=labels)
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("code")
    ax.set_ylabel("value")
    ax.set_title(f"{name}: every code (red lines NaN, purple inf)")
    ax.legend(loc="upper left", fontsize=7)
    return fig


def _symlog_ticks(smallest: float, largest: float, most: int = 3) -> tuple[list[float], list[str]]:
    """At most ``most`` decades each side of 0, evenly spaced, so the labels never overlap."""
    # The linear band around 0 is one decade wide: keep the lowest tick a decade above it.
    low, high = math.ceil(math.log10(smallest * 4)), math.ceil(math.log10(largest))
    step = max(1, math.ceil((high - low) / most))
    exponents = list(range(high, low - 1, -step))
    ticks = [10.0**k for k in exponents] + [0.0] + [-(10.0**k) for k in reversed(exponents)]
    labels = [f"$10^{{{k}}}$" for k in exponents] + ["0"]
    labels += [f"$-10^{{{k}}}$" for k in reversed(exponents)]
    return ticks, labels


def plot_boundaries(name: str, boundaries: Sequence[Boundary]) -> Figure:
    """Each midpoint and whether its tie goes down or up (ties to even)."""
    fig = Figure(figsize=(7, 2.8), layout="constrained")
    ax = fig.add_subplot()
    mids = np.array([b.midpoint for b in boundaries])
    up = np.array([b.tie_to == b.upper for b in boundaries])
    ax.scatter(mids[up], np.ones(up.sum()), s=8, marker="^", label="tie rounds up")
    ax.scatter(mids[~up], np.zeros((~up).sum()), s=8, marker="v", label="tie rounds down")
    over = [b.midpoint for b in boundaries if b.overflows]
    if over:
        ax.axvline(over[0], color="tab:red", lw=0.8, label="tie overflows")
    ax.set_xscale("log", base=2)
    ax.set_yticks([0, 1], ["down", "up"])
    ax.set_xlabel("positive midpoint")
    ax.set_title(f"{name}: rounding boundaries")
    ax.legend(fontsize=7, loc="center left")
    return fig
