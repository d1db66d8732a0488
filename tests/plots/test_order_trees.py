"""The tree drawing: where each add sits, and one panel per tree."""

from __future__ import annotations

from fp8lab.order import fused_tree, pairwise_tree, sequential_tree
from fp8lab.plots import plot_sum_trees
from fp8lab.plots.order import tree_layout


def test_layout_heights_are_depths() -> None:
    _, seq = tree_layout(sequential_tree(8))
    _, pair = tree_layout(pairwise_tree(8))
    assert seq[-1] == 7 and pair[-1] == 3  # a chain climbs per summand, pairs per level
    x, _ = tree_layout(pairwise_tree(4))
    assert x[4:] == [0.5, 2.5, 1.5]


def test_one_panel_per_tree_and_fused_adds_apart() -> None:
    trees = {"seq": sequential_tree(16), "fused": fused_tree(64, 32), "pair": pairwise_tree(5)}
    fig = plot_sum_trees(trees)
    assert len(fig.axes) == 3
    fused_ax = fig.axes[1]
    binary, fused = fused_ax.collections
    # two fused adds: 32 leaves (a bar and 32 drops), then node 0 and 32 leaves (a bar, 33)
    assert len(fused.get_segments()) == (1 + 32) + (1 + 33)
    assert len(binary.get_segments()) == 0
