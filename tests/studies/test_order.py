"""The notebook's study functions: every model named, numpy and torch reproduced, the summary."""

from __future__ import annotations

import pytest

from fp8lab.refs.gemm_accumulators import MODELS
from fp8lab.studies import order_torch as torch_study
from fp8lab.studies.order import OrderRow, model_order_rows, numpy_order_rows
from fp8lab.studies.order_epilogue_cost import EpilogueCost
from fp8lab.studies.order_summary import OrderSummary, order_summary
from tests.conftest import needs


def test_model_rows_name_every_model() -> None:
    rows = model_order_rows([16, 200])
    assert len(rows) == 2 * len(MODELS)
    by = {(r.target, r.k): r.family for r in rows}
    assert by[("pairwise", 200)] == "pairwise"
    assert by[("split_k_128", 200)] == "split_k(chunk=128, parts=2, reduce=sequential)"
    assert by[("fused_32_e8m13", 200)] == "fused(n=32)"
    assert all(r.calls > 0 and r.queries >= r.k - 1 for r in rows)


def test_numpy_rows_reproduce_every_output_and_name_the_host() -> None:
    rows, records = numpy_order_rows([16, 64], [(16, 16), (1, 16)], seed=3)
    assert len(rows) == len(records) == 4
    assert all(r.verdict == "reproduced" for r in rows), [r.note for r in rows]
    assert all(r.outputs_checked == 2 * r.m * r.n == r.outputs_reproduced for r in rows)
    assert all(r.classes == len(rec.classes) >= 1 for r, rec in zip(rows, records, strict=True))
    assert all(r.cpu and r.blas and r.core_type and r.threads >= 1 for r in rows)


def test_without_torch_the_torch_study_is_one_row_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch_study, "torch_available", lambda: False)
    rows, records = torch_study.torch_order_rows([16], [32], [(16, 16)], seed=3)
    assert records == [] and len(rows) == 1
    assert rows[0].family == rows[0].note == torch_study.NO_TORCH


@needs("torch", extra="torch")
def test_torch_rows_reproduce_every_output() -> None:
    rows, records = torch_study.torch_order_rows([16, 64], [32], [(16, 16), (1, 16)], seed=3)
    assert len(rows) == 2 * 2 + 2 * 2 == len(records)
    assert all(r.verdict == "reproduced" for r in rows), [r.note for r in rows]
    assert all(r.outputs_checked == 2 * r.m * r.n == r.outputs_reproduced for r in rows)
    assert {r.target for r in rows} == {
        "torch.matmul f32",
        "torch._scaled_mm emulated",
        "torch._scaled_mm oneDNN",
    }


def _summary(torch_rows: list[OrderRow]) -> OrderSummary:
    models = model_order_rows([16, 64], {"fused_32_e8m13": MODELS["fused_32_e8m13"]})
    numpy_rows, _ = numpy_order_rows([16], [(16, 16)], seed=3)
    cost = EpilogueCost("folded", "f32", 100, 7, 1, 0.07)
    ratios = {"sequential": 0.001, "fused_32_e8m13": 2.4}
    return order_summary(
        {"seed": 3}, models, numpy_rows, torch_rows, ratios, [cost], torch_study.NO_TORCH
    )


def test_summary_puts_parameters_and_verdicts_first() -> None:
    absent = [
        OrderRow("torch", 0, 0, 0, torch_study.NO_TORCH, 0, 0, 0.0, note=torch_study.NO_TORCH)
    ]
    summary = _summary(absent)
    text = summary._repr_markdown_()
    assert text.startswith("## Summary\n\nParameters: `seed` = 3")
    topics = {r.topic: r for r in summary.rows}
    assert topics["fp8lab models inferred and named"].verdict == "PASS"
    assert topics["numpy.matmul"].verdict == "PASS"
    assert topics["torch"].verdict == f"PENDING ({torch_study.NO_TORCH})"
    assert set(summary.verdicts()) == {"fp8lab models inferred and named", "numpy.matmul", "torch"}
    assert set(summary.numbers()) == set(topics) and summary.parameter_values() == {"seed": "3"}
    assert "fused_32_e8m13 2.4" in topics["fused vs sequential error"].numbers
    assert "folded 7/100 off (max 1 ulp)" in topics["epilogue cost, intermediate f32"].numbers


def test_summary_says_when_a_library_row_is_unfixed_or_unchecked() -> None:
    # planted: a torch row with no fixed order (reported: still PASS, saying so), and an
    # _scaled_mm row that neither reproduced nor was shown unfixed (FAIL)
    def row(target: str, k: int, verdict: str, same: int) -> OrderRow:
        return OrderRow(target, k, 16, 16, "sequential", k - 1, k - 1, 0.0, 1, 512, same, verdict)

    good = row("torch.matmul f32", 64, "reproduced", 512)
    loose = row("torch.matmul f32", 16, "not-fixed", 511)
    fused = row("torch._scaled_mm oneDNN", 32, "not-checked", 0)
    topics = {r.topic: r for r in _summary([loose, good, fused]).rows}
    assert (
        topics["torch.matmul f32"].verdict
        == "PASS (1 of 2 rows: no fixed order, with the evidence)"
    )
    assert topics["torch._scaled_mm oneDNN"].verdict.startswith("FAIL (1 of 1 rows")
    assert "1 of 2 rows reproduced" in topics["torch.matmul f32"].numbers
