"""--check goes red on evidence that is stale or unbacked.

Runs are filed with ``EvidenceRun`` directly (no papermill), so these tests take
milliseconds; the notebooks are tiny ones written into ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.proofs import PROOF_PLAN
from fp8lab.evidence.staleness import check_published
from fp8lab.runtime.atomic import write_atomic
from fp8lab.sweeps.range_run import ALL_PATTERNS
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
        write_atomic(run.staging / "report.html", b"<html></html>")
        write_atomic(run.staging / notebook.name, notebook.read_bytes())
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


def _rewrite_manifest(run: Path, edit: Any) -> None:
    manifest = run / "manifest.json"
    data = json.loads(manifest.read_text())
    edit(data)
    manifest.chmod(0o644)
    manifest.write_text(json.dumps(data))


def test_a_manifest_trimmed_of_a_declared_file_is_not_fresh(
    tmp_path: Path, sandbox: dict[str, Path]
) -> None:
    notebook = write_notebook(tmp_path / "nbs", "nb", "out.table('orders', rows)")
    run = file_notebook_run(tmp_path / "results", notebook, DEFAULTS)
    notebooks = {"nb": notebook}
    assert status(tmp_path / "results", notebooks, "nb").startswith("corrupt not fresh: tables/")
    (run / "tables").mkdir(exist_ok=True)
    (run / "tables" / "orders.json").write_text("[]")
    assert "not fresh: tables/orders.json (in the run folder" in status(
        tmp_path / "results", notebooks, "nb"
    )
    (run / "tables" / "orders.json").unlink()
    (run / "report.html").unlink()  # deleted, and dropped from the manifest's own list
    _rewrite_manifest(run, lambda d: d["files"].pop("report.html"))
    got = status(tmp_path / "results", notebooks, "nb")
    assert "not fresh: report.html (declared by the notebook" in got
    _rewrite_manifest(run, lambda d: d["files"].clear())  # an emptied list is not fresh either
    assert status(tmp_path / "results", notebooks, "nb").startswith("corrupt not fresh:")


def test_an_unlisted_file_in_a_run_is_not_fresh(tmp_path: Path, sandbox: dict[str, Path]) -> None:
    notebooks = {"nb": sandbox["notebook"]}
    run = file_notebook_run(tmp_path / "results", sandbox["notebook"], DEFAULTS)
    assert status(tmp_path / "results", notebooks, "nb").startswith("fresh")
    (run / "extra.svg").write_text("<svg/>")
    assert status(tmp_path / "results", notebooks, "nb") == (
        "corrupt not fresh: extra.svg (in the run folder, not in the manifest)"
    )
    assert main(["evidence", "--check", "--results", str(tmp_path / "results"),
                 "--notebooks", str(sandbox["notebook"].parent)]) == 1  # fmt: skip


def test_an_absurdly_deep_manifest_is_one_corrupt_line_and_the_check_goes_on(
    tmp_path: Path, sandbox: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    notebooks = {"nb": sandbox["notebook"]}
    file_notebook_run(tmp_path / "results", sandbox["notebook"], DEFAULTS)
    deep = tmp_path / "results" / "other" / "deep-run"
    deep.mkdir(parents=True)
    (deep / "manifest.json").write_text("[" * 200_000 + "]" * 200_000)
    rows = {r.notebook: r for r in check_published(tmp_path / "results", notebooks)}
    assert rows["nb"].status == "fresh" and rows["other"].status == "corrupt"
    assert rows["other"].reason == "unreadable: nested too deep"
    argv = ["evidence", "--check", "--results", str(tmp_path / "results")]
    assert main([*argv, "--notebooks", str(sandbox["notebook"].parent)]) == 1
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err and "nested too deep" in err.out + err.err
