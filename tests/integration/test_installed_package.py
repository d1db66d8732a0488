"""An installed (not editable) fp8lab runs from any folder: its gates and its notebooks.

The package is built from this checkout into a private folder (a wheel's contents,
the notebooks copied inside by the build), then run from an empty folder with that
folder first on the path, so nothing of the checkout can be found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def fp8lab(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "fp8lab", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def test_the_installed_package_carries_its_notebooks_and_no_checkout(installed: Path) -> None:
    assert sorted(p.name for p in (installed / "fp8lab" / "notebooks").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "notebooks").glob("*.ipynb")
    )
    assert not (installed / "notebooks").exists()


def test_gate_g1_passes_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    done = fp8lab(installed, tmp_path, "gates", "--gate", "G1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("PASS") == 3 and list(tmp_path.iterdir()) == []


def test_a_notebook_runs_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    results = tmp_path / "out"
    done = fp8lab(installed, tmp_path, "evidence", "gate_g1", "-p", "smoke=true", "--results",
                  str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = (results / "gate_g1").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["git"]["short"] == "nogit"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
