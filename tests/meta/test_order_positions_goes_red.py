"""Per-position order inference goes red: row-dependent orders split into the right classes,
and an order that is not fixed is reported as such, never as reproduced."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from fp8lab.order import F32MatmulProbe, SumTree, pairwise_tree, sequential_tree
from fp8lab.order.grid import GridProbe
from fp8lab.order.per_position import check_classes, infer_positions, judge
from fp8lab.order.positions import PositionClass
from fp8lab.order.reproduce import Reproduction
from fp8lab.order.run import tree_matmul
from tests.order.row_kernels import by_sign, reversed_tree, three_tiles

K = 16


def by_row(trees: Callable[[int], SumTree]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """An f32 matmul whose row r sums in the tree ``trees(r)``."""

    def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([tree_matmul(trees(r), a[r : r + 1], b) for r in range(len(a))])

    return matmul


def test_a_gemm_whose_order_changes_with_the_row_gives_three_classes() -> None:
    rec = infer_positions(F32MatmulProbe(three_tiles, K, m=16, n=4), "tiles", seed=5)
    got = {tuple(sorted({r for r, _ in c.outputs})): c.tree for c in rec.classes}
    assert got == {
        tuple(range(6)): sequential_tree(K),
        tuple(range(6, 12)): pairwise_tree(K),
        tuple(range(12, 16)): reversed_tree(K),
    }
    assert all(len(c.outputs) == len({r for r, _ in c.outputs}) * 4 for c in rec.classes)
    assert rec.verdict == "reproduced" and rec.outputs_reproduced == rec.outputs_checked == 128


def test_a_uniform_gemm_gives_one_class_for_the_calls_of_one_inference() -> None:
    rec = infer_positions(F32MatmulProbe(by_row(lambda r: pairwise_tree(K)), K, m=8, n=3), "u")
    single = infer_positions(
        F32MatmulProbe(by_row(lambda r: pairwise_tree(K)), K, m=8, n=3), "u", [(0, 0)]
    )
    assert len(rec.classes) == 1 and len(rec.classes[0].outputs) == 24
    assert rec.to_json()["family"] == "pairwise" and rec.calls == single.calls


def test_one_output_alone_misses_the_other_tiles() -> None:
    # the single-output inference of the old kind, checked at every output, is not fixed
    probe = F32MatmulProbe(three_tiles, K, m=16, n=2)
    grid = GridProbe(probe)
    wrong = PositionClass(
        tuple((r, c) for r in range(16) for c in range(2)), sequential_tree(K), "s"
    )
    fields = {"kernel": "t", "probe": "f32_matmul", "k": K, "shape": (16, 2), "method": "recursive",
              "calls": 0, "seconds": 0.0}  # fmt: skip
    rec = check_classes(grid, fields, [wrong], seed=3)
    assert rec.verdict == "not-fixed" and rec.outputs_reproduced < rec.outputs_checked
    assert "reproduce" in rec.evidence[0]


def test_a_kernel_that_changes_between_calls_is_not_fixed() -> None:
    calls = {"n": 0}

    def flaky(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        calls["n"] += 1
        tree = sequential_tree(K) if calls["n"] % 2 else reversed_tree(K)
        return tree_matmul(tree, a, b)

    rec = infer_positions(F32MatmulProbe(flaky, K, m=4, n=4), "flaky", seed=1)
    assert rec.verdict == "not-fixed" and rec.evidence


def test_a_kernel_whose_order_depends_on_the_values_is_not_fixed() -> None:
    # sums in sequential order, except when its first operand is negative: then reversed
    rec = infer_positions(F32MatmulProbe(by_sign, K, m=4, n=4), "by_sign", seed=2, draws=4)
    assert rec.verdict == "not-fixed"
    assert any("depends on the operand values" in line for line in rec.evidence)


def test_a_non_sum_at_some_positions_is_a_class_with_its_error() -> None:
    def half_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = tree_matmul(sequential_tree(K), a, b)
        out[2:] = np.max(a, axis=1, keepdims=True)[2:]
        return out

    rec = infer_positions(F32MatmulProbe(half_max, K, m=4, n=2), "half_max", seed=4)
    assert rec.verdict == "not-fixed"
    broken = [c for c in rec.classes if c.tree is None]
    assert broken and {r for c in broken for r, _ in c.outputs} == {2, 3}
    assert "not a count" in broken[0].error


@pytest.mark.parametrize(
    ("rep", "changes", "verdict"),
    [
        (Reproduction(8, 8, 0, 0, 3, 2), 0, "reproduced"),
        (Reproduction(8, 7, 0, 0, 3, 2), 0, "not-fixed"),
        (Reproduction(8, 8, 0, 1, 3, 2), 0, "not-fixed"),
        (Reproduction(8, 8, 0, 0, 3, 2), 1, "not-fixed"),
        (Reproduction(0, 0, 4, 0, 3, 2), 0, "not-checked"),
        (Reproduction(0, 0, 0, 0, 3, 2), 0, "not-checked"),
    ],
)
def test_judge_names_every_finding(rep: Reproduction, changes: int, verdict: str) -> None:
    one = PositionClass(((0, 0),), sequential_tree(4), "sequential")
    got, evidence = judge([one], rep, changes)
    assert got == verdict and (verdict == "reproduced") == (evidence == ())
