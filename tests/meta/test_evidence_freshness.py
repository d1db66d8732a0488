"""--check goes red on evidence that is stale or unbacked (issue 9 item 8, issue 10 item 10).

Runs are filed with ``EvidenceRun`` directly (no papermill), so these tests take
milliseconds; the notebooks are tiny ones written into ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import importlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.staleness import check_published
from fp8lab.exhaustive import ALL_PATTERNS
from fp8lab.proofs import PROOF_PLAN
from tests.notebooks.conftest import write_notebook

pytestmark = pytest.mark.notebook

# The module, not the function of the same name that fp8lab.evidence exports.
provenance = importlib.import_module("fp8lab.evidence.provenance")

DEFAULTS = {"seed": 0, "smoke": False}


def file_notebook_run(results: Path, notebook: Path, params: dict[str, Any]) -> Path:
    """File a complete run of ``notebook`` the way the runner does, without executing it."""
    run = EvidenceRun(results, notebook.stem, params)
    run.extra = {
        "notebook": notebook.name,
        "notebook_sha256": hashlib.sha256(notebook.read_bytes()).hexdigest(),
    }
    with run:
        run.write_json("tables.json", {})
    assert run.final is not None
    return run.final


def file_proofs_run(results: Path, stop: int = ALL_PATTERNS, *, partial: bool = False) -> Path:
    params = {"stop": stop, "plan": [p.slug for p in PROOF_PLAN]}
    with EvidenceRun(results, "proofs", params, partial=partial) as run:
        run.write_json("gates.json", [])
    assert run.final is not None
    return run.final


def status(results: Path, notebooks: dict[str, Path], name: str) -> str:
    rows = {r.notebook: r for r in check_published(results, notebooks)}
    return f"{rows[name].status} {rows[name].reason}"


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A package root with source and package data, a repo root with pins, one notebook."""
    package = tmp_path / "repo" / "pkg"
    (package / "mutants").mkdir(parents=True)
    (package / "a.py").write_text("X = 1\n")
    (package / "mutants" / "equivalent.toml").write_text("[[mutant]]\nid = 'S1'\n")
    (tmp_path / "repo" / "constraints.txt").write_text("numpy==2.1.0\n")
    (tmp_path / "repo" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.setattr(provenance, "PACKAGE_ROOT", package)
    monkeypatch.setattr(provenance, "REPO_ROOT", tmp_path / "repo", raising=False)
    notebook = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    return {"package": package, "repo": tmp_path / "repo", "notebook": notebook}


def test_check_sees_an_edit_to_package_data(tmp_path: Path, sandbox: dict[str, Path]) -> None:
    notebooks = {"nb": sandbox["notebook"]}
    file_notebook_run(tmp_path / "results", sandbox["notebook"], DEFAULTS)
    assert status(tmp_path / "results", notebooks, "nb").startswith("fresh")
    (sandbox["package"] / "mutants" / "equivalent.toml").write_text("[[mutant]]\nid = 'S2'\n")
    assert status(tmp_path / "results", notebooks, "nb").startswith("stale")


@pytest.mark.parametrize("pin", ["constraints.txt", "pyproject.toml"])
def test_check_sees_an_edit_to_the_pins(tmp_path: Path, sandbox: dict[str, Path], pin: str) -> None:
    notebooks = {"nb": sandbox["notebook"]}
    file_notebook_run(tmp_path / "results", sandbox["notebook"], DEFAULTS)
    assert status(tmp_path / "results", notebooks, "nb").startswith("fresh")
    (sandbox["repo"] / pin).write_text((sandbox["repo"] / pin).read_text() + "# edited\n")
    assert status(tmp_path / "results", notebooks, "nb") == "stale pins changed"


def test_check_covers_the_proofs_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    results = tmp_path / "results"
    file_notebook_run(results, notebook, DEFAULTS)
    argv = ["evidence", "--check", "--results", str(results), "--notebooks", str(notebook.parent)]
    assert main(argv) == 1  # no proofs run: missing
    assert "proofs: missing" in capsys.readouterr().out
    file_proofs_run(results)
    assert main(argv) == 0
    assert "proofs: fresh" in capsys.readouterr().out
    monkeypatch.setattr(provenance, "code_hash", lambda *a, **k: "0" * 64)
    monkeypatch.setattr("fp8lab.evidence.staleness.code_hash", lambda *a, **k: "0" * 64)
    assert main(argv) == 1
    assert "proofs: stale" in capsys.readouterr().out


def test_a_partial_proof_is_never_the_published_one(tmp_path: Path) -> None:
    file_proofs_run(tmp_path, stop=0x100, partial=True)  # as fp8lab prove --stop files it
    rows = {r.notebook: r for r in check_published(tmp_path, {})}
    assert rows["proofs"].status == "missing"
    file_proofs_run(tmp_path, stop=0x100)  # as it was filed before: complete, beside full runs
    rows = {r.notebook: r for r in check_published(tmp_path, {})}
    assert rows["proofs"].status == "non-default" and "stop=256" in rows["proofs"].reason
    file_proofs_run(tmp_path)
    file_proofs_run(tmp_path, stop=0x100, partial=True)  # newer, but partial
    rows = {r.notebook: r for r in check_published(tmp_path, {})}
    assert rows["proofs"].status == "fresh"


def test_a_smoke_run_is_never_the_published_run(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    notebooks = {"nb": notebook}
    file_notebook_run(tmp_path / "results", notebook, {"seed": 0, "smoke": True})
    line = status(tmp_path / "results", notebooks, "nb")
    assert line.startswith("non-default") and "smoke=True" in line
    file_notebook_run(tmp_path / "results", notebook, DEFAULTS)
    file_notebook_run(tmp_path / "results", notebook, {"seed": 7, "smoke": False})  # newer
    line = status(tmp_path / "results", notebooks, "nb")
    assert line.startswith("fresh") and "seed=7" in line  # the newer run is named, not counted


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_dirty_looks_at_the_sources_not_at_results(tmp_path: Path) -> None:
    (tmp_path / "fp8lab").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "fp8lab" / "a.py").write_text("X = 1\n")
    (tmp_path / "results" / "index.json").write_text("[]\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "init")
    assert provenance.git_state(tmp_path)["dirty"] is False
    (tmp_path / "results" / "index.json").write_text("[{}]\n")  # what the first run does
    assert provenance.git_state(tmp_path)["dirty"] is False
    (tmp_path / "fp8lab" / "a.py").write_text("X = 2\n")
    assert provenance.git_state(tmp_path)["dirty"] is True
