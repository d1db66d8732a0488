"""The report-summary and expected-FAIL checks go red on a planted defect."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lab.evidence import front_page as fp
from fp8lab.evidence import headline, index, report, shown
from tests.evidence.front_fixtures import executed_notebook, file_run, gate
from tests.evidence.test_report_summary import summary_first


def _rendered(tmp_path: Path) -> str:
    return report.render_report(executed_notebook(tmp_path / "nb.ipynb")).decode()


def test_the_unplanted_report_opens_with_its_summary(tmp_path: Path) -> None:
    assert summary_first(_rendered(tmp_path))


def test_a_renderer_that_leaves_the_summary_last_goes_red(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "SUMMARY_TAG", "not-a-tag")  # the cell is never found: stays last
    assert not summary_first(
        report.render_report(executed_notebook(tmp_path / "nb.ipynb")).decode()
    )


def test_a_summary_shown_twice_goes_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = report.new_markdown_cell
    monkeypatch.setattr(
        report, "new_markdown_cell", lambda text: real(text + "\n\n<div class='fp8lab-summary'>")
    )
    assert not summary_first(
        report.render_report(executed_notebook(tmp_path / "nb.ipynb")).decode()
    )


def test_a_table_that_never_folds_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shown, "FOLD_ROWS", 10**9)
    rows = [{"a": i} for i in range(40)]
    assert "<details" not in shown.table_html("t", ["a"], rows)


def _unexpected_fail_page(tmp_path: Path) -> str:
    files = {"tables/g3_kernels.json": [gate("G3", "k", "FAIL", 4, 8, 40, "bitwise")]}
    file_run(tmp_path, "gemm_pipeline", {"seed": 5}, files)
    return index.front_page(tmp_path, notebooks={})[1]


def test_every_fail_marked_expected_goes_red(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = headline.gate_records
    monkeypatch.setattr(
        index,
        "gate_records",
        lambda d: [{**g, "expected_status": g["status"]} for g in real(d)],
    )
    monkeypatch.setattr(index, "expected_fail", lambda g: g["status"] == "FAIL")
    page = _unexpected_fail_page(tmp_path)
    assert "class='expected'" in page and "(1 expected)" in page  # what the real test forbids


def test_an_expected_fail_turned_into_a_pass_goes_red(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fp.badge
    monkeypatch.setattr(fp, "badge", lambda s: real("PASS" if s == "FAIL" else s))
    why = {"gate": "G3", "kernel": "k", "expected_status": "FAIL", "why": "negative control"}
    files = {
        "tables/g3_kernels.json": [gate("G3", "k", "FAIL", 4, 8, 40, "tolerance")],
        "tables/expected_verdicts.json": [why],
    }
    file_run(tmp_path, "gemm_pipeline", {"seed": 5}, files)
    page = index.front_page(tmp_path, notebooks={})[1]
    marked = "<span class='badge FAIL'>FAIL</span> <span class='expected'>expected FAIL</span>"
    assert marked not in page  # the real test's assertion fails
