"""The Chromium probe names each defect a reader would see (STYLE principle 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evidence.chromium_probe import chromium, probe, reader_problems

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium; "
    ".ci/run installs it)",
)


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
