"""The operands-prescaled model with an inferred order: the tree runner and G3 on real sums."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import run_g3_report
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
from fp8lab.kernels.sources.torch import TORCH_SCALED_MM
from fp8lab.order import (
    inferred_spec,
    lanes_tree,
    pairwise_tree,
    sequential_tree,
    split_k_tree,
    tree_from_nested,
    tree_matmul,
)
from fp8lab.populations.gemm import G3Case
from fp8lab.refs import gemm_accumulators as ga
from fp8lab.refs.gemm_tree import tree_accumulate
from tests.conftest import needs
from tests.order.prescaled_kernels import lanes_prescaled

# G3's seed cases and the one across vLLM's swap cut; the 1x64 case takes torch's M = 1 path
CASES = [
    G3Case(1, 64, 128, 101, 0.035, 0.017, "f32"),
    G3Case(4, 32, 256, 102, 0.035, 0.017, "f32"),
    G3Case(8, 48, 128, 103, 0.041, 0.0092, "bf16"),
    G3Case(3, 16, 64, 104, 1.0, 1.0, "f32"),
    G3Case(65, 48, 256, 204, 0.13, 0.77, "f32"),
]
SHAPES = [(c.m, c.n, c.k) for c in CASES]


def operands(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)  # not fp8 values: products are inexact
    a = rng.standard_normal((m, k)).astype(np.float32)
    return a, rng.standard_normal((n, k)).astype(np.float32)


@pytest.mark.parametrize("k", [1, 2, 37, 128])
def test_tree_runner_equals_the_named_models(k: int) -> None:
    a, b = operands(k, 5, 7, k)
    cases = [
        (sequential_tree(k), "rounded", ga.sequential(a, b)),
        (pairwise_tree(k), "rounded", ga.pairwise(a, b)),
        (split_k_tree(k, 16), "rounded", ga.split_k(a, b, block=16)),
        (sequential_tree(k), "fused", ga.sequential_fma(a, b)),
    ]
    for tree, products, want in cases:
        got = tree_accumulate(tree.nodes, a, b, products)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (k, products)


def test_tree_runner_rounded_equals_the_order_packages_runner() -> None:
    a, b = operands(9, 6, 3, 100)
    tree = lanes_tree(100, 8, "pairwise")
    got = tree_accumulate(tree.nodes, a, b, "rounded")
    assert np.array_equal(got.view(np.uint32), tree_matmul(tree, a, b).view(np.uint32))
    fused = tree_accumulate(tree.nodes, a, b, "fused")
    assert not np.array_equal(got, fused)  # FMA chains differ on inexact products


def test_fused_high_starts_a_two_leaf_node_from_the_larger_leaf() -> None:
    a, b = operands(4, 64, 64, 2)
    tree = tree_from_nested(2, [0, 1])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    p0, p1 = (np.multiply.outer(a64[:, i], b64[:, i]) for i in (0, 1))  # exact
    low = tree_accumulate(tree.nodes, a, b, "fused")
    high = tree_accumulate(tree.nodes, a, b, "fused_high")
    assert np.array_equal(low, ga._fma_round(p1, p0.astype(np.float32).astype(np.float64)))
    assert np.array_equal(high, ga._fma_round(p0, p1.astype(np.float32).astype(np.float64)))
    assert not np.array_equal(low, high)


def test_g3_passes_a_prescaled_lanes_kernel_against_its_inferred_spec() -> None:
    kernel = FunctionMatmulKernel("lanes_prescaled", lanes_prescaled)
    spec, records = inferred_spec(kernel, SHAPES, epilogue="prescaled", seed=5)
    assert [r.family for r in records] == ["lanes(w=4, reduce=pairwise)"] * len(SHAPES)
    assert {p for _, _, p in spec.trees} == {"rounded"}  # fitted: the kernel multiplies, adds
    report = run_g3_report(FunctionMatmulKernel("lanes", lanes_prescaled, spec), cases=CASES)
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0, report.to_json()
    assert report.result.status.name == "PASS"
    assert "inferred accumulation, prescaled epilogue" in report.model


@needs("torch", extra="torch")
def test_g3_passes_torch_cpu_scaled_mm_against_its_inferred_prescaled_model() -> None:
    spec, records = inferred_spec(TORCH_SCALED_MM, SHAPES, epilogue="prescaled", seed=7)
    assert all(r.calls >= r.k - 1 for r in records)
    # whether the products are fused (FMA) or rounded is a fact of this host's BLAS: not asserted
    kernel = FunctionMatmulKernel(TORCH_SCALED_MM.name, TORCH_SCALED_MM.func, spec)
    report = run_g3_report(kernel, cases=CASES)
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0, report.to_json()
    assert report.result.status.name == "PASS"
