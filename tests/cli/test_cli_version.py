"""``fp8lab --version``."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from fp8lab.cli.main import main


def test_version_prints_the_pyproject_version_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out == f"fp8lab {importlib.metadata.version('fp8lab')}\n"
    assert out.split()[1] == pyproject["project"]["version"]
