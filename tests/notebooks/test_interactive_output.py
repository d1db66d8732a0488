"""An interactive notebook run says where it writes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fp8lab.evidence import filing as notebook
from fp8lab.evidence.filing import INTERACTIVE_ROOT, SCRATCH_ENV, NotebookOutput

pytestmark = pytest.mark.process


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


def test_the_default_directory_is_inside_the_lab_root_and_ignored_by_git() -> None:
    """``make lab`` serves its root; JupyterLab hides dot folders, so none on the way."""
    repo = Path(__file__).resolve().parents[2]
    found = re.search(r"jupyter lab (\S+)", (repo / "Makefile").read_text())
    assert found, "make lab starts jupyter lab on a root"
    inside = INTERACTIVE_ROOT.relative_to(repo / found[1])  # raises when outside the root
    assert not any(part.startswith(".") for part in inside.parts)
    if shutil.which("git") is None or not (repo / ".git").exists():
        pytest.skip("not a git checkout: cannot ask git what it ignores")
    probe = (INTERACTIVE_ROOT / "gate_g1-x" / "tables" / "t.json").relative_to(repo)
    ignored = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "-q", str(probe)], check=False
    )
    assert ignored.returncode == 0, f"git does not ignore {probe}"


def test_without_the_environment_variable_a_run_goes_under_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SCRATCH_ENV, raising=False)
    monkeypatch.setattr(notebook, "INTERACTIVE_ROOT", tmp_path / "runs")
    out = NotebookOutput("", "tie_sweep")
    assert out.directory.parent == tmp_path / "runs" and out.directory.name.startswith("tie_sweep-")
    assert str(out.directory) in capsys.readouterr().out
