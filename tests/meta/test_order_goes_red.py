"""The order inference goes red: wrong orders are told apart, non-sums are refused."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np
import pytest

from fp8lab.order import (
    F32MatmulProbe,
    ProbeError,
    SumProbe,
    SumTree,
    fused_tree,
    infer_order,
    name_family,
    sequential_tree,
    split_k_tree,
    tree_from_nested,
)
from fp8lab.order.siblings import SiblingTest
from fp8lab.refs import gemm_accumulators as ga
from fp8lab.runtime.guard import KernelFaultError


def test_a_planted_order_change_changes_the_tree() -> None:
    # split_k with a block of 5 differs from sequential only in where partials restart.
    planted = infer_order(F32MatmulProbe(partial(ga.split_k, block=5), 20), "planted")
    assert planted.tree != sequential_tree(20)
    assert planted.family == "split_k(chunk=5, parts=4, reduce=sequential)"


def test_a_swapped_pair_has_no_known_family() -> None:
    nested = [[[[0, 2], 1], 3], [[4, 5], [6, 7]]]
    assert name_family(tree_from_nested(8, nested)) is None
    assert name_family(split_k_tree(8, 4, "pairwise")) is not None


def test_a_kernel_that_is_not_a_sum_is_refused() -> None:
    with pytest.raises(ProbeError, match="not a count"):
        infer_order(SumProbe(lambda x: np.float32(np.max(x)), 8), "max")
    with pytest.raises(ProbeError, match="not a count"):
        infer_order(SumProbe(lambda x: np.float32(0.5), 8), "half")


def test_counts_that_fit_no_tree_are_refused() -> None:
    # answers L = K for every pair except one: no tree gives that
    class Liar:
        k, calls, queries, kind = 6, 0, 0, "sum"

        def lca_sizes(self, i: int, js: list[int]) -> list[int]:
            return [3 if (i, j) == (0, 1) else 6 for j in js]

    with pytest.raises(ProbeError, match="fit no tree"):
        infer_order(Liar(), "liar")


def test_a_kernel_that_raises_or_writes_its_input_faults() -> None:
    def writes(x: np.ndarray) -> np.float32:
        x[0] = 0
        return np.float32(x.sum())

    with pytest.raises(KernelFaultError):
        infer_order(SumProbe(writes, 8), "writes")
    with pytest.raises(KernelFaultError):
        infer_order(SumProbe(lambda x: 1 / 0, 8), "raises")


def test_g3_goes_red_when_a_kernel_claims_the_fused_model_but_sums_in_float32() -> None:
    from fp8lab.gates import run_g3_report
    from fp8lab.kernels.matmul import matmul_vllm_cpp
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
    from fp8lab.populations.gemm import SEED_CASES

    spec = MatmulSpec(accumulation="fused_32_e8m13")
    liar = FunctionMatmulKernel("sequential_claims_fused", matmul_vllm_cpp, spec)
    report = run_g3_report(liar, cases=SEED_CASES[:2])
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) > 0
    assert report.result.status.name == "FAIL"


@pytest.mark.parametrize("m", [32, 96])
def test_g3_goes_red_when_the_epilogue_order_is_not_the_declared_one(m: int) -> None:
    from fp8lab.gates import run_g3_report
    from fp8lab.kernels.matmul import PortedMatmulKernel, matmul_upstream
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
    from fp8lab.populations.gemm import G3Case

    # below the cut vLLM CUTLASS applies s_w first, above it s_in first: a
    # kernel that never swaps is wrong below, one that always swaps is wrong above
    always = PortedMatmulKernel("always_swapped", MatmulSpec(epilogue="two_scalar_swapped"))
    func = matmul_upstream if m <= 64 else always.matmul
    liar = FunctionMatmulKernel("wrong_order", func, MatmulSpec(epilogue="vllm_cutlass"))
    report = run_g3_report(liar, cases=[G3Case(m, 32, 128, 600 + m, 0.035, 0.017, "f32")])
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) > 0


def _tree_kernel(tree: SumTree) -> Callable[[np.ndarray], np.float32]:
    """A sum that follows ``tree``: float32 adds, and MMA-Sim-like fused adds.

    A node of fan-in > 2 truncates each term to 13 bits below the largest,
    adds them exactly and truncates the result to 13 fractional bits.
    """

    def trunc_to(v: float, e: int) -> float:
        return math.ldexp(math.trunc(math.ldexp(v, -e)), e)

    def fused(terms: list[float]) -> float:
        big = max((math.frexp(v)[1] - 1 for v in terms if v != 0), default=0)
        total = sum(trunc_to(v, big - 13) for v in terms)
        return 0.0 if total == 0 else trunc_to(total, math.frexp(total)[1] - 1 - 13)

    def run(x: np.ndarray) -> np.float32:
        vals: list[float] = [float(v) for v in np.asarray(x, np.float32)]
        for kids in tree.nodes:
            terms = [vals[c] for c in kids]
            if len(terms) == 2:
                vals.append(float(np.float32(terms[0]) + np.float32(terms[1])))
            else:
                vals.append(float(np.float32(fused(terms))))
        return np.float32(vals[-1])

    return run


# a fused root over single leaves with one hidden child: a pair added in
# float32, or a 3-way fused add; and a chain of 8-way fused adds whose second
# node holds a pair
HIDDEN = {
    "pair": tree_from_nested(16, [0, 1, 2, [3, 4], *range(5, 16)]),
    "fused3": tree_from_nested(16, [0, 1, 2, [3, 4, 5], *range(6, 16)]),
    "chain": tree_from_nested(16, [[0, 1, 2, 3, 4, 5, 6, 7], 8, 9, [10, 11], 12, 13, 14, 15]),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_hidden_child_of_a_fused_node_is_found(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = HIDDEN[name]
    rec = infer_order(SumProbe(_tree_kernel(tree), 16), name)
    assert rec.tree == tree and rec.sibling_rows > 0  # the test ran and said "not all single"
    flat = infer_order(SumProbe(_tree_kernel(fused_tree(16, 16)), 16), "flat")
    assert flat.tree == fused_tree(16, 16) and flat.sibling_nodes == 1
    # planted: a sibling test that always says "all single" flattens the hidden child
    monkeypatch.setattr(
        SiblingTest, "all_children", lambda self, anchor, groups: [True] * len(groups)
    )
    assert infer_order(SumProbe(_tree_kernel(tree), 16), name).tree != tree


def test_a_node_the_sibling_test_does_not_fit_costs_probes_not_a_wrong_tree() -> None:
    # one fused add rounded once: single t's add up and are kept, so the test
    # says "not all single" and pair probes decide (with masks present the
    # root drops every unit, as FPRev's probes need)
    def exact_fused(x: np.ndarray) -> np.float32:
        xs = [float(v) for v in np.asarray(x, np.float32)]
        return np.float32(math.fsum(xs) if max(map(abs, xs)) < 2.0**120 else 0.0)

    rec = infer_order(SumProbe(exact_fused, 12), "exact")
    assert rec.tree == fused_tree(12, 12) and rec.sibling_rows > 0 and rec.sibling_nodes == 0
