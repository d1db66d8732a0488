"""The front page and the reports, rendered in headless Chromium at desktop width.

Each page must show every image, no raw JSON dump and no horizontal
overflow, and a report must open with its summary, within the first window
height, with its long tables folded (see ``chromium_probe``). Skipped, with
the reason, where Chromium is not installed; ``.ci/run`` installs Debian's
``chromium`` package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fp8lab.evidence.index import front_page, headline_runs, repo_notebooks, write_index
from fp8lab.evidence.offline import remote_loads
from fp8lab.evidence.report import render_report
from fp8lab.evidence.shown import SUMMARY_TAG
from tests.evidence.chromium_probe import chromium, layout_problems, probe, reader_problems
from tests.evidence.front_fixtures import build_results

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(
        chromium() is None,
        reason="headless Chromium is not installed (Debian: apt-get install chromium; "
        ".ci/run installs it)",
    ),
]
REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_index_page_reads_cleanly(tmp_path: Path) -> None:
    build_results(tmp_path / "results")
    page = write_index(tmp_path / "results", notebooks={})
    assert reader_problems(probe(page, tmp_path / "profile")) == []


@pytest.fixture(scope="module")
def mutation_report_measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One Chromium render of a mutation report, read by the two tests below."""
    tmp = tmp_path_factory.mktemp("mutation_report")
    runs = build_results(tmp / "results")
    return probe(runs["mutation"] / "report.html", tmp / "profile")


def test_a_report_reads_cleanly_with_its_figure(mutation_report_measured: dict[str, Any]) -> None:
    measured = mutation_report_measured
    assert measured["images"] >= 1 and reader_problems(measured) == []


def test_a_report_opens_with_its_summary_and_folds_its_long_table(
    mutation_report_measured: dict[str, Any],
) -> None:
    """The summary cell comes last in the notebook; the report shows it first."""
    measured = mutation_report_measured
    assert layout_problems(measured, long_tables=True) == []
    assert measured["folds"] == 1 and measured["summary_top"] < 300


@pytest.mark.slow
def test_the_published_runs_render_cleanly(tmp_path: Path) -> None:
    """Every committed headline run's notebook, re-rendered now, and the page over them."""
    notebooks = repo_notebooks()
    runs = headline_runs(REPO_RESULTS, notebooks)
    executed = [r.directory / f"{kind}.ipynb" for kind, r in runs.items()]
    executed = [p for p in executed if p.exists()]
    if not executed:
        pytest.skip(f"no published notebook run under {REPO_RESULTS}")
    index = tmp_path / "index.html"
    index.write_text(front_page(REPO_RESULTS, notebooks)[1], encoding="utf-8")
    problems = {"index": reader_problems(probe(index, tmp_path / "profile"))}
    for path in executed:
        page = tmp_path / f"{path.stem}.html"
        page.write_bytes(render_report(path))
        measured = probe(page, tmp_path / "profile")
        problems[path.stem] = reader_problems(measured)
        problems[path.stem] += remote_loads(page.read_text(encoding="utf-8"))
        if _has_summary(path):  # runs made before the summary cell existed have none
            problems[path.stem] += layout_problems(measured, long_tables=False)
    assert {k: v for k, v in problems.items() if v} == {}


def _has_summary(executed: Path) -> bool:
    return SUMMARY_TAG in executed.read_text(encoding="utf-8")
