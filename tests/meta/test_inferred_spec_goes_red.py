"""G3 on an inferred-order spec goes red: wrong tree, wrong products, missing shape, bad spec."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fp8lab.gates import run_g3_report
from fp8lab.gates.g3_spec import declared_spec
from fp8lab.kernels.matmul import matmul_vllm_cpp
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
from fp8lab.order import ProbeError, inferred_spec, sequential_tree
from fp8lab.populations.gemm import G3Case
from fp8lab.refs.gemm_tree import tree_accumulate
from tests.order.prescaled_kernels import lanes_prescaled

CASES = [G3Case(4, 32, 64, 11, 0.035, 0.017, "f32"), G3Case(8, 16, 32, 12, 0.13, 0.77, "f32")]
SHAPES = [(c.m, c.n, c.k) for c in CASES]


def declared(products: str | None = None) -> MatmulSpec:
    kernel = FunctionMatmulKernel("lanes_prescaled", lanes_prescaled)
    return inferred_spec(kernel, SHAPES, epilogue="prescaled", products=products, seed=3)[0]


def g3(spec: MatmulSpec) -> tuple[str, int, list[str]]:
    report = run_g3_report(FunctionMatmulKernel("lanes", lanes_prescaled, spec), cases=CASES)
    assert sum(c.outputs for c in report.cases) > 0
    mismatches = sum(c.bit_mismatches for c in report.cases)
    return report.result.status.name, mismatches, [c.error for c in report.cases]


def test_the_true_spec_passes() -> None:
    assert g3(declared())[:2] == ("PASS", 0)


def test_a_planted_tree_defect_goes_red() -> None:
    spec = declared()
    (shape, nodes, products), rest = spec.trees[0], spec.trees[1:]
    planted = ((shape, sequential_tree(shape[2]).nodes, products), *rest)  # other order
    assert planted[0][1] != nodes
    status, mismatches, _ = g3(replace(spec, trees=planted))
    assert status == "FAIL" and mismatches > 0


@pytest.mark.parametrize("products", ["fused", "fused_high"])
def test_declaring_fused_products_for_rounded_ones_goes_red(products: str) -> None:
    status, mismatches, _ = g3(declared(products))
    assert status == "FAIL" and mismatches > 0


def test_no_product_rounding_fits_a_kernel_that_scales_after_the_sum() -> None:
    # at scales 1 it is a sequential sum; with the fit's scales its folded epilogue shows
    folded = FunctionMatmulKernel("folded", matmul_vllm_cpp)
    with pytest.raises(ProbeError, match="no product rounding"):
        inferred_spec(folded, SHAPES[:1], epilogue="prescaled")


def test_a_case_without_a_tree_fails_naming_it() -> None:
    spec = declared()
    status, _, errors = g3(replace(spec, trees=spec.trees[:1]))
    assert status == "FAIL"
    assert any("no tree for (M, N, K) = (8, 16, 32)" in e for e in errors)


@pytest.mark.parametrize(
    "spec",
    [
        MatmulSpec("inferred", "prescaled"),  # no trees
        MatmulSpec("inferred", "prescaled", trees=(((1, 16, 2), ((0, 1),), "odd"),)),
        MatmulSpec("inferred", "prescaled", trees=(((1, 16, 2), ((0, 1),)),)),  # no products
        MatmulSpec("sequential", "folded", trees=(((1, 16, 2), ((0, 1),), "fused"),)),
        MatmulSpec("inferred", "prescaled", trees=(((1, 16), ((0, 1),), "fused"),)),  # type: ignore[arg-type]
        MatmulSpec("inferred", "prescaled", trees=(((1, 16, 2), 5, "fused"),)),  # type: ignore[arg-type]
    ],
)
def test_specs_g3_cannot_read_are_refused(spec: MatmulSpec) -> None:
    with pytest.raises(ValueError, match=r"names no known model|unreadable"):
        declared_spec(FunctionMatmulKernel("k", lanes_prescaled, spec))


def test_the_tree_runner_refuses_trees_without_a_float32_order() -> None:
    a = b = np.ones((1, 3), np.float32)
    with pytest.raises(ValueError, match="only binary"):
        tree_accumulate(((0, 1, 2), (1, 2)), a, b, "rounded")
    with pytest.raises(ValueError, match="2 nodes"):
        tree_accumulate(((0, 1),), a, b, "rounded")
    with pytest.raises(ValueError, match="used twice"):
        tree_accumulate(((0, 1), (1, 3)), a, b, "rounded")
    with pytest.raises(ValueError, match="products"):
        tree_accumulate(((0, 1), (2, 3)), a, b, "exact")
