"""The front page and the reports, rendered in headless Chromium at desktop width (issue 13 §3).

Each page must show every image, no raw JSON dump and no horizontal
overflow (see ``chromium_probe``). Skipped, with the reason, where Chromium is
not installed; ``.ci/run`` installs Debian's ``chromium`` package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lab.evidence.index import front_page, headline_runs, repo_notebooks, write_index
from fp8lab.evidence.offline import remote_loads
from fp8lab.evidence.report import render_report
from tests.evidence.chromium_probe import chromium, probe, reader_problems
from tests.evidence.front_fixtures import build_results

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium; "
    ".ci/run installs it)",
)
REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_index_page_reads_cleanly(tmp_path: Path) -> None:
    build_results(tmp_path / "results")
    page = write_index(tmp_path / "results", notebooks={})
    assert reader_problems(probe(page, tmp_path / "profile")) == []


def test_a_report_reads_cleanly_with_its_figure(tmp_path: Path) -> None:
    runs = build_results(tmp_path / "results")
    measured = probe(runs["mutation"] / "report.html", tmp_path / "profile")
    assert measured["images"] >= 1 and reader_problems(measured) == []


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
        problems[path.stem] = reader_problems(probe(page, tmp_path / "profile"))
        problems[path.stem] += remote_loads(page.read_text(encoding="utf-8"))
    assert {k: v for k, v in problems.items() if v} == {}
