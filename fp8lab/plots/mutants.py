"""Figures of the mutation notebook."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from fp8lab.gates.records import MutantVerdict
from fp8lab.mutants.harness import MutantResult

__all__ = ["plot_margins"]


def plot_margins(
    results: Sequence[MutantResult], threshold: int, before: Sequence[MutantResult] = ()
) -> Figure:
    """Kill margin (failed assertions) per mutant, the threshold, and the margin before."""
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    ids = [r.id for r in results]
    colors = [
        "tab:green" if r.verdict is MutantVerdict.KILLED and not r.thin else "tab:red"
        for r in results
    ]
    ax.bar(range(len(ids)), [r.margin for r in results], color=colors, label="margin")
    if before:
        old = {r.id: r.margin for r in before}
        shown = [k for k, i in enumerate(ids) if i in old]  # mutants the "before" run judged
        ax.scatter(
            shown,
            [old[ids[k]] for k in shown],
            marker="_",
            s=120,
            color="k",
            label="before strengthening",
            zorder=3,
        )
    ax.axhline(threshold, color="tab:red", lw=0.8, ls="--", label=f"threshold {threshold}")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_xticks(range(len(ids)), ids, rotation=60, fontsize=7)
    ax.set_ylabel("failed assertions")
    ax.set_title("kill margin per catalogue mutant")
    ax.legend(fontsize=7)
    return fig
