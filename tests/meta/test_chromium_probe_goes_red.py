"""The Chromium probe names each defect a reader would see."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evidence.chromium_probe import chromium, layout_problems, probe, reader_problems

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(
        chromium() is None,
        reason="headless Chromium is not installed (Debian: apt-get install chromium; "
        ".ci/run installs it)",
    ),
]


def test_a_clean_page_is_green(tmp_path: Path) -> None:
    page = tmp_path / "clean.html"
    page.write_text("<!doctype html><html><body><p>fine</p></body></html>")
    assert reader_problems(probe(page, tmp_path / "profile")) == []


def test_a_missing_image_a_json_dump_and_overflow_each_go_red(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><html><body><img src='figures/missing.svg'>"
        '<pre>{"status": "PASS", "cases": 16}</pre>'
        "<div style='width:3000px'>wide</div></body></html>"
    )
    found = reader_problems(probe(page, tmp_path / "profile"))
    assert [p.split(":")[0] for p in found] == [
        "image did not load",
        "raw JSON dump",
        "horizontal overflow",
    ]


SUMMARY = "<div class='fp8lab-summary'><h2>Summary</h2></div>"
FOLD = "<details class='fp8lab-fold'><summary>t</summary><table></table></details>"


def test_a_summary_at_the_top_and_a_closed_fold_are_green(tmp_path: Path) -> None:
    page = tmp_path / "good.html"
    page.write_text(f"<!doctype html><html><body>{SUMMARY}{FOLD}</body></html>")
    assert layout_problems(probe(page, tmp_path / "profile"), long_tables=True) == []


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (f"<div style='height:2000px'></div>{SUMMARY}{FOLD}", "summary starts at"),
        (FOLD, "summaries: 0"),
        (SUMMARY + SUMMARY + FOLD, "summaries: 2"),
        (SUMMARY + "<table></table>", "no folded table"),
        (SUMMARY + FOLD.replace("<details ", "<details open "), "1 folds open"),
    ],
    ids=["summary-below-the-fold", "no-summary", "two-summaries", "no-fold", "fold-open"],
)
def test_each_layout_defect_goes_red(tmp_path: Path, body: str, want: str) -> None:
    page = tmp_path / "bad.html"
    page.write_text(f"<!doctype html><html><body>{body}</body></html>")
    found = layout_problems(probe(page, tmp_path / "profile"), long_tables=True)
    assert len(found) == 1 and found[0].startswith(want), found
