"""fp8lab built as a wheel installs it (not editable), once per test session."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEFT_OUT = (".git", ".venv", "results", "build", "*.egg-info", "__pycache__", ".*_cache", "tests")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding fp8lab as its wheel installs it (notebooks inside), and no dependency."""
    source = tmp_path_factory.mktemp("source") / "fp8lab"  # a build leaves build/ behind
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*LEFT_OUT))
    target = tmp_path_factory.mktemp("site")
    build = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    build += ["--no-build-isolation", "--disable-pip-version-check", "--target", str(target)]
    done = subprocess.run(
        [*build, str(source)], capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return target
