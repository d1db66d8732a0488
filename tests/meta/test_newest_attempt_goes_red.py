"""Test the testers: a failed attempt newer than a complete run turns the front page and
``evidence --check`` red; the newest attempt is shown whatever its end.

A failed attempt newer than a complete run at the same inputs is the kind's
status (``failed``), with the complete run beside it as its last complete
run, never as the status. Runs are filed with ``EvidenceRun`` directly (no
papermill), so these tests take milliseconds; :func:`headline_problems`
reads the page and compares it with the manifests on disk, sharing no code
with the renderer beyond the package and pins hashes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.evidence import EvidenceRun, staleness
from fp8lab.evidence import execute as runner
from fp8lab.evidence.execute import NotebookRunError
from fp8lab.evidence.index import front_page
from fp8lab.runtime.atomic import write_atomic
from fp8lab.runtime.exit_codes import EXIT_CODES
from fp8lab.sweeps.range_run import ALL_PATTERNS
from tests.evidence.front_fixtures import table_rows
from tests.notebooks.conftest import write_notebook

pytestmark = pytest.mark.notebook

provenance = importlib.import_module("fp8lab.evidence.provenance")

DEFAULTS = {"seed": 0, "smoke": False}
MX = {"stop": ALL_PATTERNS, "plan": ["mx-proof"]}
NONE = "\N{EN DASH}"  # an empty cell, as the page's "&ndash;" reads


def file_attempt(
    results: Path,
    kind: str,
    params: dict[str, Any],
    started: str,
    *,
    notebook: Path | None = None,
    fail: str = "",
    extra: dict[str, str] | None = None,
) -> Path:
    """File a run of ``kind`` as the runner does: complete, or failed for the reason ``fail``.

    It is filed as started at ``started``, so that the order of the runs is fixed, not the
    clock's (a manifest edited after filing is a tampered run).
    """
    run = EvidenceRun(results, kind, params)
    run.started = dt.datetime.fromisoformat(started)
    run.extra = dict(extra or {})
    if notebook is not None:
        sha = hashlib.sha256(notebook.read_bytes()).hexdigest()
        run.extra.update({"notebook": notebook.name, "notebook_sha256": sha})
    try:
        with run:
            run.write_json("records/t.json", [])
            if notebook is not None:  # what every notebook run holds: its report and notebook
                write_atomic(run.staging / "report.html", b"<html></html>")
                write_atomic(run.staging / notebook.name, notebook.read_bytes())
            if fail:
                raise NotebookRunError(fail)
    except NotebookRunError:
        pass
    assert run.final is not None
    return run.final


def folder(results: Path, run: Path) -> str:
    return run.relative_to(results.resolve()).as_posix()


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """One notebook ``nb`` with a complete run, then a failed attempt at the same inputs."""
    notebook = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    results = tmp_path / "results"
    file_attempt(results, "proofs", {"stop": ALL_PATTERNS}, "2026-01-01T00:00:00+00:00")
    complete = file_attempt(results, "nb", DEFAULTS, "2026-01-02T00:00:00+00:00", notebook=notebook)
    failed = file_attempt(
        results,
        "nb",
        DEFAULTS,
        "2026-01-03T00:00:00+00:00",
        notebook=notebook,
        fail="cell 2 line 1 `assert x == 2` raised AssertionError",
    )
    return {"notebook": notebook, "results": results, "complete": complete, "failed": failed}


def headline_problems(page: str, results: Path, notebooks: dict[str, Path]) -> list[str]:
    """Where the page's headline table misstates a kind's newest attempt at the current inputs.

    From the manifests on disk: an attempt is a complete or failed run, not a
    smoke run, whose package, pins and notebook hashes are the current ones.
    """
    inputs = {"code_hash": provenance.code_hash(), "pins_hash": provenance.pins_hash()}
    by_kind: dict[str, list[tuple[str, str, str]]] = {}
    for path in sorted(results.glob("**/manifest.json")):
        data = json.loads(path.read_text())
        want = dict(inputs)
        if data["kind"] in notebooks:
            source = notebooks[data["kind"]].read_bytes()
            want["notebook_sha256"] = hashlib.sha256(source).hexdigest()
        current = all(data.get(k) == v for k, v in want.items())
        if current and data["status"] in ("complete", "failed") and not data["params"].get("smoke"):
            where = path.parent.relative_to(results).as_posix()
            by_kind.setdefault(data["kind"], []).append((data["started"], data["status"], where))
    rows = table_rows(page, "runs")
    head = [c[0] for c in rows[0]]
    end = next((i for i, r in enumerate(rows[1:], 1) if r[0][0] == "run"), len(rows))
    shown = {r[0][0]: dict(zip(head, r, strict=True)) for r in rows[1:end]}
    problems = []
    for kind, tried in sorted(by_kind.items()):
        _, status, where = max(tried)
        done = [w for _, s, w in sorted(tried) if s == "complete" and w != where]
        row = shown.get(kind)
        if row is None:
            problems.append(f"{kind}: no headline row")
            continue
        if not any(where in href for href in row["run"][2]):
            problems.append(f"{kind}: newest attempt {where} is not the headline run")
        verdict = "fresh" if status == "complete" else status
        if row["evidence --check"][0] != verdict:
            problems.append(f"{kind} is {verdict}, shown {row['evidence --check'][0]!r}")
        last = done[-1] if done and status != "complete" else NONE
        if row["last complete"][0] != last:
            problems.append(f"{kind}: last complete {last}, shown {row['last complete'][0]!r}")
    return problems


def check_argv(tree: dict[str, Path]) -> list[str]:
    notebooks = str(tree["notebook"].parent)
    return ["evidence", "--check", "--results", str(tree["results"]), "--notebooks", notebooks]


def test_a_newer_failed_attempt_is_the_headline_with_the_complete_run_beside_it(
    tree: dict[str, Path],
) -> None:
    results, notebooks = tree["results"], {"nb": tree["notebook"]}
    rows, page = front_page(results, notebooks)
    assert headline_problems(page, results, notebooks) == []
    failed, complete = folder(results, tree["failed"]), folder(results, tree["complete"])
    assert failed.startswith("failed/nb/")
    by_dir = {r["directory"]: r for r in rows}
    assert by_dir[failed]["check"] == "failed" and by_dir[failed]["last_complete"] == complete
    assert by_dir[complete]["check"] is None and by_dir[complete]["last_complete"] is None
    assert "Headline runs fresh against the current code: 1 of 2 (failed: nb)." in page


def test_check_exits_non_zero_and_names_the_failed_attempt(
    tree: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(check_argv(tree)) == EXIT_CODES["fail"]
    lines = capsys.readouterr().out.splitlines()
    failed = folder(tree["results"], tree["failed"])
    complete = folder(tree["results"], tree["complete"])
    (line,) = [x for x in lines if x.startswith("nb:")]
    assert line.startswith(f"nb: failed {failed} ") and "raised AssertionError" in line
    assert line.endswith(f"last complete: {complete}")
    assert [x.split()[:2] for x in lines if not x.startswith("nb:")] == [["proofs:", "fresh"]]


def test_a_newer_complete_attempt_stays_green(
    tree: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    results, notebooks = tree["results"], {"nb": tree["notebook"]}
    newest = file_attempt(
        results, "nb", DEFAULTS, "2026-01-04T00:00:00+00:00", notebook=tree["notebook"]
    )
    # Failures that are no attempt at the current inputs: a smoke run, another package.
    smoke = {**DEFAULTS, "smoke": True}
    file_attempt(
        results, "nb", smoke, "2026-01-05T00:00:00+00:00", notebook=tree["notebook"], fail="x"
    )
    file_attempt(
        results,
        "nb",
        DEFAULTS,
        "2026-01-06T00:00:00+00:00",
        notebook=tree["notebook"],
        fail="y",
        extra={"code_hash": "0" * 64},
    )
    page = front_page(results, notebooks)[1]
    assert headline_problems(page, results, notebooks) == []
    assert "Headline runs fresh against the current code: 2 of 2." in page
    assert main(check_argv(tree)) == EXIT_CODES["pass"]
    assert f"nb: fresh {folder(results, newest)}" in capsys.readouterr().out


def test_a_failed_proofs_mx_attempt_is_checked_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    file_attempt(results, "proofs", {"stop": ALL_PATTERNS}, "2026-01-01T00:00:00+00:00")
    argv = ["evidence", "--check", "--results", str(results), "--notebooks", str(tmp_path)]
    assert main(argv) == EXIT_CODES["pass"]  # no proofs-mx run yet: not checked
    assert "proofs-mx" not in capsys.readouterr().out
    complete = file_attempt(results, "proofs-mx", MX, "2026-01-02T00:00:00+00:00")
    assert main(argv) == EXIT_CODES["pass"]
    assert f"proofs-mx: fresh {folder(results, complete)}" in capsys.readouterr().out
    failed = file_attempt(results, "proofs-mx", MX, "2026-01-03T00:00:00+00:00", fail="failed: p")
    assert main(argv) == EXIT_CODES["fail"]
    out = capsys.readouterr().out
    assert f"proofs-mx: failed {folder(results, failed)} " in out
    assert f"last complete: {folder(results, complete)}" in out
    assert headline_problems(front_page(results, {})[1], results, {}) == []


def test_a_judge_that_ignores_failed_attempts_goes_red(
    tree: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defect this replaces: the older complete run shown as the status, and a green check."""
    real = staleness.attempts

    def complete_only(runs: Any, differs: Any, inputs: Any) -> Any:
        return [r for r in real(runs, differs, inputs) if r.manifest["status"] == "complete"]

    monkeypatch.setattr(staleness, "attempts", complete_only)
    results, notebooks = tree["results"], {"nb": tree["notebook"]}
    found = headline_problems(front_page(results, notebooks)[1], results, notebooks)
    failed = folder(results, tree["failed"])
    assert found == [
        f"nb: newest attempt {failed} is not the headline run",
        "nb is failed, shown 'fresh'",
        f"nb: last complete {folder(results, tree['complete'])}, shown '{NONE}'",
    ]
    assert main(check_argv(tree)) == EXIT_CODES["pass"]  # what the check test catches


def test_the_failed_line_names_the_runs_folder_under_the_results_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    monkeypatch.setattr(runner, "_papermill", lambda *a, **k: (1, 0.0))  # papermill exits 1
    results = tmp_path / "results"
    argv = ["evidence", "nb", "--results", str(results), "--notebooks", str(notebook.parent)]
    assert main(argv) == EXIT_CODES["fail"]
    (run,) = (results / "failed" / "nb").iterdir()
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "FAILED" in x]
    assert line.startswith(f"[1/1] nb: FAILED (failed/nb/{run.name}): papermill exited 1")
    assert str(tmp_path) not in line
