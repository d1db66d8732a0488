"""The evidence front page (results/index.html) and standalone reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.evidence import front_page as fp
from fp8lab.evidence.headline import (
    detector_counts,
    gate_records,
    merge_same,
    mutation_summary,
    number,
    proof_records,
)
from fp8lab.evidence.index import front_page, write_index
from fp8lab.evidence.offline import remote_loads
from fp8lab.evidence.report import render_report
from tests.evidence.front_fixtures import (
    build_results,
    executed_notebook,
    file_run,
    gate,
    page_problems,
    proof,
    table_rows,
)
from tests.notebooks.conftest import write_notebook


def test_count_has_thousands_separators_and_names_2_to_the_32() -> None:
    assert fp.count(69168) == "69,168"
    assert fp.count(1 << 32) == "4,294,967,296 (2^32)"
    assert fp.count(0) == "0"
    assert fp.count(None) == fp.NONE
    assert fp.count(True) == "True"  # a flag is not a count


def test_scale_is_decimal_beside_exact_hex() -> None:
    assert fp.scale((0.0092).hex()) == ("0.0092", "0x1.2d77318fc5048p-7")
    assert fp.scale(0.5) == ("0.5", "0x1.0000000000000p-1")
    assert fp.scale(None) is None
    cell = fp.render("front_macros.html.j2", "scale_cell", value=(0.0092).hex())
    assert cell == "0.0092 <code>0x1.2d77318fc5048p-7</code>"


def test_seconds_and_hex_numbers() -> None:
    assert fp.seconds((38.602).hex()) == "38.6 s"
    assert fp.seconds(None) == fp.NONE
    assert number("nan") != number("nan")  # a NaN stays a NaN
    assert number("not a number") is None


def badge_html(status: str) -> str:
    return str(fp.render("front_macros.html.j2", "status_badge", status=status))


@pytest.mark.parametrize("status", ["PASS", "FAIL", "PENDING"])
def test_badge_names_its_status_in_its_own_class(status: str) -> None:
    html = badge_html(status)
    assert f"class='badge {status}'" in html and f">{status}" in html


def test_pending_is_never_styled_or_worded_as_pass() -> None:
    html = badge_html("PENDING")
    assert "PASS" not in html and "owed" in html
    assert ".PENDING" in fp.STYLE and ".PENDING" not in fp.STYLE.split(".PASS")[0]


def test_nan_class_says_identical_explained_or_unexplained() -> None:
    assert fp.nan_class(proof("a", "b", "e4m3fn")) == "identical"
    explained = {
        **proof("a", "b", "e4m3fn"),
        "nan_code_mismatches": 1008205823,
        "nan_code_exempt_side": "ml_dtypes",
        "nan_code_exempt_policy": "keep-sign",
    }
    assert fp.nan_class(explained).startswith("1,008,205,823 differ, all explained: ml_dtypes")
    assert fp.nan_class(proof("a", "b", "e4m3fn", nan_codes=3)).startswith("3 unexplained")


def test_gate_records_are_found_by_their_fields(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()
    (tmp_path / "gates.json").write_text(json.dumps([gate("G1", "k", "PASS", 1, 2, 3)]))
    (tmp_path / "tables" / "g.json").write_text(json.dumps([gate("G3", "m", "FAIL", 4, 5, 6)]))
    (tmp_path / "tables" / "other.json").write_text(json.dumps([{"gate": "G9"}]))
    (tmp_path / "tables" / "broken.json").write_text("{")
    found = gate_records(tmp_path)
    assert [(g["gate"], g["file"]) for g in found] == [
        ("G1", "gates.json"),
        ("G3", "tables/g.json"),
    ]


def test_proof_records_read_exhaustive_and_tables(tmp_path: Path) -> None:
    (tmp_path / "exhaustive").mkdir()
    (tmp_path / "exhaustive" / "p.json").write_text(json.dumps(proof("fast", "scan", "e5m2")))
    assert [p["format"] for p in proof_records(tmp_path)] == ["e5m2"]


def test_a_proof_declared_expected_is_annotated_never_changed(tmp_path: Path) -> None:
    (tmp_path / "exhaustive").mkdir()
    (tmp_path / "tables").mkdir()
    (tmp_path / "exhaustive" / "p.json").write_text(json.dumps(proof("x", "scan", "e5m2", 0, 3)))
    (tmp_path / "exhaustive" / "q.json").write_text(json.dumps(proof("y", "scan", "e5m2")))
    notes = [
        {"a": a, "b": "scan", "format": "e5m2", "expected_status": "FAIL", "why": "w"}
        for a in ("x", "y")
    ]
    (tmp_path / "tables" / "expected_verdicts.json").write_text(json.dumps(notes))
    got = {p["a"]: p for p in proof_records(tmp_path)}
    assert (got["x"]["status"], got["x"]["expected_status"]) == ("FAIL", "FAIL")
    assert (got["y"]["status"], got["y"]["expected_status"]) == ("PASS", "FAIL")
    html = fp.proofs_section([{**p, "run": {"kind": "k"}} for p in got.values()])
    assert "1 of 2 exhaustive proofs PASS (1 of the FAILs expected)" in html
    assert "expected FAIL, got PASS" in html  # a declared control that did not fail is flagged


def test_the_front_page_counts_expected_proof_fails(tmp_path: Path) -> None:
    build_results(tmp_path)
    html = front_page(tmp_path, notebooks={})[1]
    assert "Proofs: 1 of 2 PASS (1 of the FAILs expected)." in html
    assert "a planted NaN code" in html


def test_merge_same_keeps_differing_records_apart() -> None:
    a, b = {"kind": "x"}, {"kind": "y"}
    rows = [{"v": 1, "run": a}, {"v": 1, "run": b}, {"v": 2, "run": b}]
    merged = merge_same(rows, ("v",))
    assert [(m["v"], m["runs"]) for m in merged] == [(1, [a, b]), (2, [b])]


def test_mutation_and_detector_headlines(tmp_path: Path) -> None:
    runs = build_results(tmp_path)
    summary = mutation_summary(runs["mutation"])
    assert summary is not None
    assert (summary["min_margin"], summary["thin"], summary["score"]) == (2, ["M2"], 1.0)
    assert [s["reason"] for s in summary["survivors"]] == ["block size only", "same bytes"]
    assert mutation_summary(runs["proofs"]) is None
    assert [d["count"] for d in detector_counts(runs["mutation"])] == [24]


def test_the_page_states_every_gate_and_run_freshness(tmp_path: Path) -> None:
    build_results(tmp_path)
    _, html = front_page(tmp_path, notebooks={})
    gates = [
        gate("G1", "vllm_cpp", "PASS", 16, 96, 69168),
        gate("G2", "upstream", "PENDING", 0, 0, 0),
        gate("G1", "k_old", "FAIL", 4, 8, 40),
    ]
    assert page_problems(html, tmp_path, gates) == []
    assert "owed: no CUDA device" in html
    assert "4,294,967,296 (2^32)" in html and "2 failed assertions (a kill below 3 is thin)" in html
    runs_text = " ".join(c[0] for row in table_rows(html, "runs") for c in row)
    assert "package changed" in runs_text


def test_newest_complete_run_of_each_kind_comes_first(tmp_path: Path) -> None:
    build_results(tmp_path)
    rows = table_rows(front_page(tmp_path, notebooks={})[1], "runs")
    kinds = [r[0][0] for r in rows if r[0][0] != "run"]
    assert kinds[:3] == ["gate_g1", "mutation", "proofs"]


def test_write_index_is_deterministic_and_loads_nothing(tmp_path: Path) -> None:
    build_results(tmp_path)
    first = write_index(tmp_path, notebooks={}).read_bytes()
    second = write_index(tmp_path, notebooks={}).read_bytes()
    assert first == second
    assert remote_loads(first.decode()) == []
    rows = json.loads((tmp_path / "index.json").read_text())
    assert {r["freshness"] for r in rows} == {"fresh", "stale"}


def test_a_report_loads_nothing_from_the_network_and_is_deterministic(tmp_path: Path) -> None:
    executed = executed_notebook(tmp_path / "nb.ipynb")
    html = render_report(executed)
    assert html == render_report(executed)
    assert remote_loads(html.decode()) == []
    assert b"<script" not in html and b"data:image/svg+xml;base64," in html


def test_remote_loads_finds_each_kind_of_load() -> None:
    page = (
        "<script src='https://cdn.example/x.js'></script><link rel=stylesheet href='//cdn/y.css'>"
        "<img src='http://h/i.png'>"
        "<style>@import 'https://f/a.css'; b{background:url(//h/b)}</style>"
        '<script type=module>await import("https://cdn/m.mjs")</script>'
        "<a href='https://example.org'>a link is not a load</a><img src='data:image/png;base64,AA'>"
    )
    assert len(remote_loads(page)) == 6


def test_a_name_or_parameter_holding_markup_is_shown_as_text(tmp_path: Path) -> None:
    script = "<script>alert(1)</script>"
    notebook = write_notebook(tmp_path / "notebooks", "gate_g1", extra='note: str = ""')
    file_run(
        tmp_path / "results",
        "gate_g1",
        {"seed": 0, "smoke": False, "note": script},
        {"tables/g1.json": [gate("G1", script, "FAIL", 4, 8, 40, f"reason {script}")]},
    )
    html = front_page(tmp_path / "results", notebooks={"gate_g1": notebook})[1]
    assert "<script" not in html and html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3
    (row,) = [r for r in table_rows(html, "gates") if r[0][0] == "G1"]
    assert row[1][0] == script and row[6][0] == f"reason {script}"  # the text a reader sees
    (run,) = [r for r in table_rows(html, "runs") if r[0][0] == "gate_g1"]
    assert run[5][0] == f"note={script!r}"
