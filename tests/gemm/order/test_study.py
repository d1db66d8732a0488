"""The notebook's study functions: every model named, numpy reproduced."""

from __future__ import annotations

from fp8lab.gemm.order.study import model_order_rows, numpy_order_rows
from fp8lab.refs.gemm_accumulators import MODELS


def test_model_rows_name_every_model() -> None:
    rows = model_order_rows([16, 200])
    assert len(rows) == 2 * len(MODELS)
    by = {(r.target, r.k): r.family for r in rows}
    assert by[("pairwise", 200)] == "pairwise"
    assert by[("split_k_128", 200)] == "split_k(chunk=128, parts=2, reduce=sequential)"
    assert by[("fused_32_e8m13", 200)] == "fused(n=32)"
    assert all(r.calls > 0 and r.queries >= r.k - 1 for r in rows)


def test_numpy_rows_reproduce_every_output() -> None:
    rows, records = numpy_order_rows([16, 64], [(16, 16), (1, 16)], seed=3)
    assert len(rows) == len(records) == 4
    assert all(r.outputs_checked == r.m * r.n == r.outputs_equal for r in rows)
