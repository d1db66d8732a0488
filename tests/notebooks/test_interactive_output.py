"""An interactive notebook run says where it writes (issue 13 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lab.notebook import SCRATCH_ENV, NotebookOutput


def test_an_interactive_run_prints_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path / "scratch"))
    monkeypatch.chdir(tmp_path)
    out = NotebookOutput("", "gate_g1")
    printed = capsys.readouterr().out
    assert out.directory.parent == tmp_path / "scratch" and out.directory.is_dir()
    assert printed == (
        f"Interactive run: tables and figures go to {out.directory} "
        f"(scratch/{out.directory.name} from here)\n"
    )


def test_a_runner_run_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    NotebookOutput(str(tmp_path / "run"), "gate_g1")
    assert capsys.readouterr().out == ""
