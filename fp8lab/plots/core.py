"""Figures for the notebooks; each takes computed data and returns a matplotlib Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from fp8lab.atlas import Boundary, CodeRow
from fp8lab.gates import GateResult

__all__ = ["plot_boundaries", "plot_class_mismatches", "plot_codes", "plot_detector_counts"]


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
    ax.set_yscale("symlog", linthresh=float(min(abs(r.value) for r in finite if r.value)))
    ax.set_xlabel("code")
    ax.set_ylabel("value")
    ax.set_title(f"{name}: every code (red lines NaN, purple inf)")
    ax.legend(loc="upper left", fontsize=7)
    return fig


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
