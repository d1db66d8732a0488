"""Figures of the quant_schemes notebook; each returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

__all__ = ["plot_floor_rceil", "plot_scheme_errors"]


def plot_floor_rceil(
    exponents: Sequence[int],
    counts: np.ndarray,
    amax: np.ndarray,
    floor: np.ndarray,
    rceil: np.ndarray,
) -> Figure:
    """FLOOR against RCEIL over amax: split patterns per binade, and both bytes over a sample.

    Args:
        exponents: biased float32 exponents of the binades counted.
        counts: amax patterns per binade on which the e8m0 bytes differ.
        amax: sampled amax values (float32), increasing.
        floor: the FLOOR byte of each sampled amax.
        rceil: the RCEIL byte of each sampled amax.
    """
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.step(np.asarray(exponents) - 127, counts, where="post")
    left.axhline(2**21 - 1, ls=":", lw=0.8, color="grey")
    left.set_xlabel("binade: floor(log2(amax)) (255 - 127: inf and NaN)")
    left.set_ylabel("amax patterns that split (of 2^23)")
    left.set_title(f"{int(np.sum(counts)):,} split amax patterns in all")
    a = np.asarray(amax, np.float64)
    right.step(a, floor.astype(int) - 127, where="post", label="FLOOR (OCP MX v1.0)")
    right.step(a, rceil.astype(int) - 127, where="post", label="RCEIL (NVIDIA)", ls="--")
    split = floor != rceil
    right.fill_between(
        a, 0, 1, where=split, step="post", alpha=0.2, transform=right.get_xaxis_transform()
    )
    right.set_xscale("log", base=2)
    right.set_xlabel("amax (shaded: the bytes differ)")
    right.set_ylabel("e8m0 exponent")
    right.set_title(f"{int(split.sum())} of {a.size} sampled amax split")
    right.legend(fontsize=7)
    return fig


def plot_scheme_errors(errors: Mapping[str, np.ndarray]) -> Figure:
    """Histogram of log10 relative error per rule; exact results are drawn at the left edge."""
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.add_subplot()
    floor = -8.0
    bins = np.linspace(floor, 0.5, 60).tolist()
    for name, e in errors.items():
        with np.errstate(divide="ignore"):
            logs = np.maximum(np.log10(e), floor)
        ax.hist(logs, bins=bins, histtype="step", label=name)
    ax.set_xlabel(f"log10(|dequantized - x| / |x|) (exact or below: at {floor:g}; 0: flushed)")
    ax.set_ylabel("elements")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("error against the exact value, seeded random case")
    return fig
