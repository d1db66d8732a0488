"""Every report opens with its summary; long tables are folded; numbers read well."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

from fp8lab.evidence.headline import expected_fail, gate_records
from fp8lab.evidence.index import front_page
from fp8lab.evidence.report import render_report
from fp8lab.evidence.shown import (
    FOLD_ROWS,
    SUMMARY_CLASS,
    shown_value,
    summary_html,
    summary_rows,
    table_html,
)
from tests.evidence.front_fixtures import executed_notebook, file_run, gate


def summary_first(report: str) -> bool:
    """The summary is in the report once, above the notebook's own first cell (its title).

    nbconvert re-serialises HTML outputs, so the class may be in either quotes.
    """
    marks = [f"class={q}{SUMMARY_CLASS}{q}" for q in "'\""]
    if sum(report.count(m) for m in marks) != 1:
        return False
    start = max(report.find(m) for m in marks)
    return start < report.index('id="A-notebook"')


def test_counts_floats_and_scales_read_well() -> None:
    assert shown_value(4294967296) == "4,294,967,296 (2^32)"
    assert shown_value(69168) == "69,168" and shown_value(True) == "True"
    assert shown_value(0.1 + 0.2) == "0.3"  # not 0.30000000000000004
    assert shown_value(0.0092, "scale") == "0.0092 (0x1.2d77318fc5048p-7)"
    assert shown_value(float.fromhex("0x1.2d7732p-7"), "s_scale") == "0.0092 (0x1.2d7732p-7)"
    assert (
        shown_value(1.0, "scale_in") == "1 (0x1p+0)"
        and shown_value(-0.5, "scale") == "-0.5 (-0x1p-1)"
    )
    assert shown_value(0.0092, "ratio") == "0.0092"
    # a float32 input one ulp from its neighbour keeps its hex; a float64 statistic does not
    assert shown_value(float.fromhex("0x1.000002p+0"), "amax") == "1 (0x1.000002p+0)"
    assert shown_value(1.0, "amax") == "1" and shown_value(0.123456789123, "err") == "0.123457"
    assert shown_value({"bitwise": 0, "tolerance": 1200}) == "tolerance: 1,200"


def test_a_long_table_is_folded_and_a_short_one_is_not() -> None:
    rows = [{"a": i} for i in range(FOLD_ROWS + 1)]
    assert "<details class='fp8lab-fold'>" in table_html("t", ["a"], rows)
    assert "<details" not in table_html("t", ["a"], rows[:FOLD_ROWS])
    assert "13 rows" in table_html("t", ["a"], rows)
    assert "&lt;b&gt;" in table_html("t", ["a"], [{"a": "<b>"}])  # escaped


def test_the_summary_names_verdicts_numbers_and_parameters() -> None:
    rows = summary_rows({"G1 k": "PASS"}, {"words": 1 << 32}, {"seed": 5})
    assert [r["part"] for r in rows] == ["verdict", "number", "parameter"]
    html = summary_html(rows)
    assert html.startswith(f"<div class='{SUMMARY_CLASS}'") and "4,294,967,296 (2^32)" in html
    assert "<code>seed = 5</code>" in html and html == summary_html(rows)


def test_the_report_moves_the_summary_cell_first_and_hides_its_code(tmp_path: Path) -> None:
    executed = executed_notebook(tmp_path / "nb.ipynb")
    assert nbformat.read(executed, as_version=4).cells[-1].metadata["tags"] == ["report-summary"]
    html = render_report(executed).decode()
    assert summary_first(html) and "out.summary(...)" not in html
    assert html.encode() == render_report(executed)


def _gemm_run(results: Path, status: str, expected: bool) -> Path:
    files = {"tables/g3_kernels.json": [gate("G3", "cuda_bf16", status, 4, 8, 40, "tol")]}
    if expected:
        why = "negative control: outside the bf16 tolerance"
        row = {"gate": "G3", "kernel": "cuda_bf16", "expected_status": "FAIL", "why": why}
        files["tables/expected_verdicts.json"] = [row]
    return file_run(results, "gemm_pipeline", {"seed": 5}, files)


def test_an_expected_fail_is_marked_expected_and_stays_a_fail(tmp_path: Path) -> None:
    run = _gemm_run(tmp_path, "FAIL", expected=True)
    (record,) = gate_records(run)
    assert record["status"] == "FAIL" and expected_fail(record)
    page = front_page(tmp_path, notebooks={})[1]
    assert "Gates: 0 PASS, 1 FAIL (1 expected), 0 PENDING." in page
    assert (
        "<span class='badge FAIL'>FAIL</span> <span class='expected'>expected FAIL</span>" in page
    )
    assert json.loads((run / "tables" / "g3_kernels.json").read_text())[0]["status"] == "FAIL"


def test_a_fail_nobody_expected_is_not_marked(tmp_path: Path) -> None:
    _gemm_run(tmp_path, "FAIL", expected=False)
    page = front_page(tmp_path, notebooks={})[1]
    assert "class='expected'" not in page and "1 FAIL, 0 PENDING" in page


def test_an_expected_fail_that_passed_is_flagged(tmp_path: Path) -> None:
    _gemm_run(tmp_path, "PASS", expected=True)
    (record,) = gate_records(next(tmp_path.glob("gemm_pipeline/*/")))
    assert not expected_fail(record)
    assert "expected FAIL, got PASS" in front_page(tmp_path, notebooks={})[1]


def test_the_epilogue_study_names_its_worst_pair_readably_and_exactly() -> None:
    from fp8lab.studies.gemm_deviation import epilogue_by_scale, epilogue_deviation, scale_pairs

    rows = epilogue_deviation(epilogue_by_scale([(4, 32, 128)], scale_pairs(4, 5), 5))
    named = [r.worst_case for r in rows if r.worst_case]
    assert named and not any(re.search(r"\d\.\d{9,}", t) for t in named)  # no 17-digit reprs
    for text in named:
        for part in text.split(" s_w="):
            exact = float.fromhex(part.split("(")[1].rstrip(")"))
            assert f"{exact:.6g}" in part


def test_the_report_carries_fp8labs_own_stylesheet_once_and_nothing_remote(tmp_path: Path) -> None:
    from fp8lab.evidence.report import STYLESHEET

    html = render_report(executed_notebook(tmp_path / "nb.ipynb")).decode()
    css = STYLESHEET.read_text()
    assert html.count(css) == 1 and html.count("<style") == 1
    assert len(css.splitlines()) < 100  # not a theme of thousands of lines in every report
    assert "--jp-" not in html and "<script src=" not in html and "http" not in css
