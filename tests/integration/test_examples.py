"""The examples run as a user runs them: the numpy kernel's own pytest file, from its folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_test_file_passes_under_pytest_and_files_its_records(tmp_path: Path) -> None:
    folder = ROOT / "examples" / "numpy"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(folder),
            str(folder),
            "--fp8lab-results",
            str(tmp_path / "records"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert len(list((tmp_path / "records").glob("G1-*.json"))) == 2
