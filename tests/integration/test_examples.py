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


def test_the_torch_example_passes_and_its_divide_twin_fails() -> None:
    pytest.importorskip("torch", reason="torch is not installed (optional: the torch extra)")
    flags = ["--arrays", "torch", "--nan-policy", "keep-sign"]
    for kernel, status in (("my_torch_quant:quant", 0), ("my_torch_quant:quant_divide", 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "fp8lab", "gates", "--gate", "G1", "--kernel", kernel, *flags],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT / "examples" / "torch",
            timeout=600,
        )
        assert proc.returncode == status, proc.stdout + proc.stderr
        assert ("PASS" if status == 0 else "FAIL") in proc.stdout
