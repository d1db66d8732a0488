"""FPRev inference recovers the exact tree of every fp8lab accumulator model."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
from fp8lab.order import (
    F32MatmulProbe,
    Fp8MatmulProbe,
    SumProbe,
    SumTree,
    fused_tree,
    infer_order,
    lanes_tree,
    name_family,
    pairwise_tree,
    sequential_tree,
    split_k_tree,
    tree_from_nested,
)
from fp8lab.refs import gemm_accumulators as ga
from fp8lab.specs.format_dtypes import ml_dtypes_type
from fp8lab.specs.formats import FORMATS


def expected_tree(name: str, k: int) -> SumTree:
    """The tree each model's docstring states."""
    if name in ("sequential", "sequential_fma"):
        return sequential_tree(k)
    if name == "pairwise":
        return pairwise_tree(k)
    if name in ("split_k_128", "fast_accum_e8m13_trunc_128"):
        return split_k_tree(k, 128)
    if name == "fused_32_e8m13_promote_128":
        return fused_tree(k, 32, promote=128)
    if name == "fused_32_e8m13":
        return fused_tree(k, 32)
    raise AssertionError(f"no expected tree for {name}")


SMALL_K = (16, 64, 128)
BIG_K = (1000, 4096)


@pytest.mark.parametrize("name", sorted(ga.MODELS))
@pytest.mark.parametrize("k", SMALL_K)
def test_recovers_every_model_small_k(name: str, k: int) -> None:
    rec = infer_order(F32MatmulProbe(ga.MODELS[name], k, m=64, batch=True), name)
    assert rec.tree == expected_tree(name, k)
    assert rec.family == name_family(expected_tree(name, k)).name  # type: ignore[union-attr]
    assert rec.queries >= k - 1 and rec.calls >= 1


BIG_CASES = [(n, k) for n in sorted(ga.MODELS) for k in BIG_K]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "k"), BIG_CASES)
def test_recovers_every_model_big_k(name: str, k: int) -> None:
    # pairwise asks many small groups: few rows per call keep each call cheap;
    # the fused models' calls are few (the sibling test batches every group)
    rows = 8 if name == "pairwise" else 64 if "fused" in name else 256
    rec = infer_order(F32MatmulProbe(ga.MODELS[name], k, m=rows, batch=True), name)
    assert rec.tree == expected_tree(name, k)
    assert rec.family is not None


@pytest.mark.parametrize("name", ["fused_32_e8m13", "fused_32_e8m13_promote_128"])
def test_sibling_test_settles_every_fused_node_in_a_few_outputs(name: str) -> None:
    k = 200  # 6 full 32-way nodes and a short one of 8
    rec = infer_order(F32MatmulProbe(ga.MODELS[name], k, m=64, batch=True), name)
    pairs_only = infer_order(
        F32MatmulProbe(ga.MODELS[name], k, m=64, batch=True), name, siblings=False
    )
    assert rec.tree == pairs_only.tree == expected_tree(name, k)
    groups = -(-k // 32)  # every 32-way node, the short last one included
    assert rec.sibling_nodes == groups and pairs_only.sibling_nodes == pairs_only.sibling_rows == 0
    # K-1 pairs from leaf 0, 1 pair per group, 3 outputs per group, 1 base and
    # the one calibration scan (1 + 2 * 80 rows); promote adds the chunk splits
    assert rec.queries <= 2 * k + 4 * groups + 200 and pairs_only.queries > 14 * k
    data = rec.to_json()
    assert data["sibling_nodes"] == groups and data["sibling_rows"] == rec.sibling_rows > 0


def test_sibling_test_is_not_asked_of_binary_trees() -> None:
    for name in ("sequential", "pairwise", "split_k_128"):
        rec = infer_order(F32MatmulProbe(ga.MODELS[name], 256, m=64, batch=True), name)
        assert rec.sibling_rows == 0 and rec.tree == expected_tree(name, 256)


@pytest.mark.parametrize("k", [23, 1000])
@pytest.mark.parametrize("block", [5, 384])
def test_split_k_with_uneven_tails(k: int, block: int) -> None:
    model = partial(ga.split_k, block=block)
    rec = infer_order(F32MatmulProbe(model, k, m=128, batch=True), f"split_k_{block}")
    assert rec.tree == split_k_tree(k, block)
    if block < k:
        parts = -(-k // block)
        assert rec.family == f"split_k(chunk={block}, parts={parts}, reduce=sequential)"


@pytest.mark.parametrize("name", sorted(ga.MODELS))
@pytest.mark.parametrize("k", [7, 16])
def test_basic_and_recursive_agree(name: str, k: int) -> None:
    basic = infer_order(F32MatmulProbe(ga.MODELS[name], k), name, "basic")
    rec = infer_order(F32MatmulProbe(ga.MODELS[name], k), name)
    assert basic.tree == rec.tree == expected_tree(name, k)
    assert basic.calls == k * (k - 1) // 2


def test_call_counts_follow_fprev() -> None:
    k = 64
    seq = infer_order(F32MatmulProbe(ga.sequential, k), "seq")
    pair = infer_order(F32MatmulProbe(ga.pairwise, k), "pair")
    assert seq.calls == k - 1  # one probe from leaf 0 per other leaf
    assert pair.calls == (k // 2) * 6  # (K/2)·log2 K for a balanced tree


@pytest.mark.parametrize("kernel", sorted(BUILTIN_MATMUL_KERNELS))
@pytest.mark.parametrize("batch", [False, True])
def test_fp8_probe_on_builtin_kernels(kernel: str, batch: bool) -> None:
    probe = Fp8MatmulProbe(BUILTIN_MATMUL_KERNELS[kernel], 128, m=16, batch=batch)
    rec = infer_order(probe, kernel)
    assert rec.tree == sequential_tree(128)
    assert rec.family == "sequential" and rec.probe == "fp8_matmul"


def test_sum_probe_on_plain_sums() -> None:
    def pairwise_sum(x: np.ndarray) -> np.float32:
        return ga.pairwise(x[None, :], np.ones((1, x.size), np.float32))[0, 0]

    def cumsum(x: np.ndarray) -> np.float32:
        return np.cumsum(x, dtype=np.float32)[-1]

    assert infer_order(SumProbe(pairwise_sum, 40), "p").tree == pairwise_tree(40)
    assert infer_order(SumProbe(cumsum, 40), "c").family == "sequential"


def test_record_is_json_and_tree_round_trips() -> None:
    rec = infer_order(F32MatmulProbe(partial(ga.split_k, block=4), 10), "sk4")
    data = json.loads(json.dumps(rec.to_json()))
    assert SumTree.from_json(data["tree"]) == rec.tree == split_k_tree(10, 4)
    assert data["family"] == "split_k(chunk=4, parts=3, reduce=sequential)"
    assert data["calls"] == rec.calls and isinstance(data["seconds"], float)
    assert data["host"]["cpu"] and "library" in data["host"]["blas"]  # the host it holds on


def test_families_name_themselves() -> None:
    for k in (2, 16, 33, 100):
        assert name_family(sequential_tree(k)).name == "sequential"  # type: ignore[union-attr]
    assert name_family(pairwise_tree(100)).name == "pairwise"  # type: ignore[union-attr]
    assert name_family(split_k_tree(100, 30, "pairwise")).name == (  # type: ignore[union-attr]
        "split_k(chunk=30, parts=4, reduce=pairwise)"
    )
    assert name_family(fused_tree(100, 32)).name == "fused(n=32)"  # type: ignore[union-attr]
    promoted = name_family(fused_tree(300, 32, promote=128))
    assert promoted is not None and promoted.name == "fused(n=32, promote=128)"
    lanes = tree_from_nested(8, [[[0, 4], [1, 5]], [[2, 6], [3, 7]]])
    assert name_family(lanes).name == "lanes(w=4, reduce=pairwise)"  # type: ignore[union-attr]
    assert name_family(lanes_tree(1000, 16, "sequential")).name == (  # type: ignore[union-attr]
        "lanes(w=16, reduce=sequential)"
    )
    odd = tree_from_nested(6, [[[0, 2], 1], [[3, 5], 4]])
    assert name_family(odd) is None


def test_canonical_form_ignores_child_order_and_ids() -> None:
    a = tree_from_nested(4, [[3, 2], [1, 0]])
    b = SumTree.from_children(4, [[0, 1], [2, 3], [5, 4]])
    assert a == b
    with pytest.raises(ValueError, match="root"):
        SumTree.from_children(4, [[0, 1]])
    with pytest.raises(ValueError, match="two parents"):
        SumTree.from_children(3, [[0, 1], [1, 2]])


def test_fp8_probe_absorption_bound() -> None:
    # the fp8 mask absorbs a partial of up to 2048 units of 2**-18, not 2049
    from fp8lab.order import FP8_SAFE_K

    mask = np.float32(448.0 * 448.0)
    unit = 2.0**-18
    assert np.float32(mask + np.float32(2048 * unit)) == mask
    assert np.float32(mask + np.float32(2049 * unit)) != mask
    assert np.float32(mask + np.float32(unit)) == mask
    assert FP8_SAFE_K == 2048 + 2


def _fused_fp8_kernel(name: str) -> FunctionMatmulKernel:
    """A MatmulKernel on e4m3fn codes whose sum is the fp8lab model ``name`` (scales 1)."""
    e4m3 = ml_dtypes_type(FORMATS["e4m3fn"])

    def matmul(a: np.ndarray, b: np.ndarray, s_in: object, s_w: object, out: str) -> np.ndarray:
        assert float(s_in) == float(s_w) == 1.0 and out == "f32"  # type: ignore[arg-type]
        da = np.asarray(a, np.uint8).view(e4m3).astype(np.float32)
        db = np.asarray(b, np.uint8).view(e4m3).astype(np.float32)
        return np.asarray(ga.MODELS[name](da, db), np.float32)

    return FunctionMatmulKernel(name, matmul, MatmulSpec())


@pytest.mark.parametrize("batch", [False, True])
def test_fp8_probe_settles_fused_nodes_with_e4m3_products(batch: bool) -> None:
    k = 128
    kernel = _fused_fp8_kernel("fused_32_e8m13")
    rec = infer_order(Fp8MatmulProbe(kernel, k, m=16, batch=batch), "fused_fp8")
    assert rec.tree == fused_tree(k, 32) and rec.sibling_nodes == 4


def test_sums_refuse_values_the_probe_cannot_form() -> None:
    with pytest.raises(ValueError, match="not a float32"):
        F32MatmulProbe(ga.sequential, 8).sums([{0: 0.1}])
    with pytest.raises(ValueError, match="no e4m3fn product"):
        Fp8MatmulProbe(BUILTIN_MATMUL_KERNELS["vllm_cpp"], 32).sums([{0: 2.0**-20}])
    got = Fp8MatmulProbe(BUILTIN_MATMUL_KERNELS["vllm_cpp"], 32).sums([{0: 2.0**16, 5: 0.375}])
    assert got == [int(np.float32(2.0**16 + 0.375).view(np.uint32))]
