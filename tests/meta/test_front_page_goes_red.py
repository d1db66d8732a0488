"""The front-page checks go red on a planted defect.

Each test plants one defect in the renderer or the report template and shows
that the check the real page passes (``page_problems``, ``remote_loads``)
names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fp8lab.evidence import front_page as fp
from fp8lab.evidence import index, report
from fp8lab.evidence.offline import remote_loads
from tests.evidence.front_fixtures import (
    build_results,
    executed_notebook,
    file_run,
    gate,
    page_problems,
    table_rows,
)

GATES = [
    gate("G1", "vllm_cpp", "PASS", 16, 96, 69168),
    gate("G2", "upstream", "PENDING", 0, 0, 0),
    gate("G1", "k_old", "FAIL", 4, 8, 40),
]


def problems(results: Path) -> list[str]:
    return page_problems(index.front_page(results, notebooks={})[1], results, GATES)


def test_the_unplanted_page_is_green(tmp_path: Path) -> None:
    build_results(tmp_path)
    assert problems(tmp_path) == []


def test_pending_rendered_as_pass_goes_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_results(tmp_path)
    real = fp.badge
    monkeypatch.setattr(fp, "badge", lambda s: real("PASS" if s == "PENDING" else s))
    assert any(p.startswith("G2/upstream is PENDING, shown 'PASS'") for p in problems(tmp_path))


def test_a_stale_run_shown_fresh_goes_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = build_results(tmp_path)
    monkeypatch.setattr(index, "run_freshness", lambda record, inputs, required=(): ("fresh", ""))
    found = problems(tmp_path)
    assert found == [f"gate_g1/{runs['old'].name} is stale, shown 'fresh'"]


def test_a_dropped_pending_gate_goes_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_results(tmp_path)
    real = index.gate_records
    monkeypatch.setattr(
        index, "gate_records", lambda d: [g for g in real(d) if g["status"] != "PENDING"]
    )
    assert "G2/upstream: 0 rows" in problems(tmp_path)


def test_counts_without_separators_go_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_results(tmp_path)
    monkeypatch.setattr(fp, "count", lambda v: str(v))
    assert any("counts shown as ['16', '96', '69168']" in p for p in problems(tmp_path))


def test_merging_disagreeing_runs_would_hide_a_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_results(tmp_path)
    file_run(
        tmp_path, "gemm", {}, {"tables/g.json": [gate("G1", "vllm_cpp", "FAIL", 16, 96, 69168)]}
    )

    def statuses() -> list[str]:
        rows = table_rows(index.front_page(tmp_path, notebooks={})[1], "gates")
        return sorted(r[2][0] for r in rows if r[0][0] == "G1" and r[1][0] == "vllm_cpp")

    assert statuses() == ["FAIL", "PASS"]
    monkeypatch.setattr(index, "GATE_KEY", ("gate", "kernel"))
    assert statuses() == ["PASS"]  # what the check above catches


def test_a_report_with_the_cdn_scripts_goes_red(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executed = executed_notebook(tmp_path / "nb.ipynb")
    assert remote_loads(report.render_report(executed).decode()) == []
    monkeypatch.setattr(report, "STANDALONE_TEMPLATE", "{%- extends 'index.html.j2' -%}")
    loads: list[Any] = remote_loads(report.render_report(executed).decode())
    assert any("require" in x for x in loads) and any("mathjax" in x for x in loads)
