"""``make docs``: the manual builds with MkDocs in strict mode, and a broken link fails the build.

The build runs ``mkdocs build --strict`` as ``make docs`` does (the ``docs``
extra is part of ``test``); the meta test copies the pages, plants a link to a
page that does not exist, and expects the build to fail naming it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="mkdocs missing: pip install 'fp8lab[docs]'")

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        check=False,
        cwd=config.parent,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    proc = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "run_g1" in api and "assert_gate" in api  # the API pages came from the docstrings
    for page in ("manual", "glossary", "records"):
        assert (tmp_path / "site" / page / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    config = (ROOT / "mkdocs.yml").read_text().replace("paths: [.]", f"paths: [{ROOT}]")
    (tmp_path / "mkdocs.yml").write_text(config)
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [the gone page](no-such-page.md).\n")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr, proc.stderr
