"""numpy's float32 matmul (OpenBLAS sgemm here): the inferred tree, run as a model,
reproduces numpy's outputs bit for bit on seeded random fp8 operands.

Inference and check run in the same process on the same shapes, so the test
holds whatever kernel OpenBLAS picks for this CPU (OPENBLAS_CORETYPE is left
as found). The order depends on the shape: probe and check use the same one.
"""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.compare import assert_bitexact
from fp8lab.gemm.order import F32MatmulProbe, SumTree, infer_order, pairwise_tree, sequential_tree
from fp8lab.gemm.order.run import tree_matmul
from fp8lab.gemm.population import remap_nan_bytes
from fp8lab.refs.gemm_model import decode_e4m3fn


def numpy_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a @ b.T)


def fp8_operands(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = remap_nan_bytes(rng.integers(0, 256, (m, k), dtype=np.uint8))
    b = remap_nan_bytes(rng.integers(0, 256, (n, k), dtype=np.uint8))
    return decode_e4m3fn(a), decode_e4m3fn(b)


SHAPES = [(16, 16, 16), (16, 16, 64), (1, 16, 128), (64, 64, 128), (16, 16, 1000)]


def infer_numpy(m: int, n: int, k: int) -> SumTree:
    return infer_order(F32MatmulProbe(numpy_matmul, k, m=m, n=n), "numpy").tree


@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_inferred_tree_reproduces_numpy_bit_for_bit(m: int, n: int, k: int) -> None:
    tree = infer_numpy(m, n, k)
    for seed in (1, 2):
        a, b = fp8_operands(seed * 7919 + k, m, n, k)
        assert assert_bitexact(tree_matmul(tree, a, b), numpy_matmul(a, b)) == m * n


def test_inferred_tree_reproduces_numpy_at_k_4096() -> None:
    tree = infer_numpy(16, 16, 4096)
    a, b = fp8_operands(4096, 16, 16, 4096)
    assert assert_bitexact(tree_matmul(tree, a, b), numpy_matmul(a, b)) == 256


def test_a_wrong_tree_does_not_reproduce_numpy() -> None:
    # the check has teeth: a known order that is not numpy's misses some outputs
    m, n, k = 16, 16, 64
    tree = infer_numpy(m, n, k)
    wrong = next(t for t in (sequential_tree(k), pairwise_tree(k)) if t != tree)
    a, b = fp8_operands(5, m, n, k)
    assert (tree_matmul(wrong, a, b) != numpy_matmul(a, b)).any()


def test_fused_trees_are_refused_as_float32_models() -> None:
    from fp8lab.gemm.order import fused_tree

    a = np.ones((1, 64), np.float32)
    with pytest.raises(ValueError, match="fused node"):
        tree_matmul(fused_tree(64, 32), a, a)
