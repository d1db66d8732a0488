"""The attempts log: every filed run is one chained line, and --check sees what was undone.

Runs are filed with ``EvidenceRun`` directly, so these take milliseconds; the
killed runner is a real process, in ``test_attempts_killed_runner.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.attempts import ATTEMPTS_LOG, adopt_runs, log_problems, read_log
from fp8lab.evidence.proofs import PROOF_PLAN
from fp8lab.evidence.staleness import check_published

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = {"stop": 1 << 32, "plan": [p.slug for p in PROOF_PLAN]}


def file_run(results: Path, *, error: BaseException | None = None, partial: bool = False) -> Path:
    run = EvidenceRun(results, "proofs", PUBLISHED, partial=partial)
    try:
        with run:
            run.write_json("gates.json", [])
            if error is not None:
                raise error
    except (RuntimeError, KeyboardInterrupt):
        pass
    assert run.final is not None
    return run.final


def log_rows(results: Path) -> list[str]:
    """--check's lines about the log and the staging area."""
    rows = check_published(results, {})
    return [f"{r.status} {r.run} {r.reason}" for r in rows if r.notebook == ATTEMPTS_LOG] + [
        f"{r.status} {r.run}" for r in rows if r.status in ("interrupted", "running")
    ]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    file_run(root, error=RuntimeError("a gate failed"))
    file_run(root)
    return root


def test_every_end_of_a_run_is_one_chained_line(tmp_path: Path) -> None:
    root = tmp_path / "results"
    file_run(root)
    file_run(root, error=RuntimeError("boom"))
    file_run(root, partial=True)
    file_run(root, error=KeyboardInterrupt())
    lines, problems = read_log(root)
    assert problems == [] and log_problems(root) == []
    assert [line.fields["outcome"] for line in lines] == [
        "complete",
        "failed",
        "partial",
        "interrupted",
    ]
    assert {line.fields["entry"] for line in lines} == {"filed"}


def test_a_deleted_failed_attempt_fails_the_check(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert log_rows(results) == []
    (failed,) = (results / "failed" / "proofs").iterdir()
    shutil.rmtree(failed)
    (row,) = log_rows(results)
    assert "line 1: the failed attempt's folder is gone" in row
    argv = ["evidence", "--check", "proofs", "--results", str(results), "--notebooks", str(ROOT)]
    assert main(argv) == 1
    assert f"{ATTEMPTS_LOG}: corrupt failed/proofs/{failed.name}" in capsys.readouterr().out


def test_a_file_edited_with_its_hash_rewritten_in_the_manifest_fails(results: Path) -> None:
    (run,) = (results / "proofs").iterdir()
    (run / "gates.json").write_text('[{"status": "PASS"}]\n')
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["files"]["gates.json"] = "0" * 64  # any rewrite of the manifest is seen
    (run / "manifest.json").write_text(json.dumps(manifest))
    (row,) = log_rows(results)
    assert "its manifest changed after attempts.log line 2 logged it" in row


def test_a_removed_line_breaks_the_chain_and_unlogs_its_folder(results: Path) -> None:
    log = results / ATTEMPTS_LOG
    file_run(results)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + lines[2])
    rows = log_rows(results)
    assert any("line 2 does not chain to the line before it" in r for r in rows)
    assert any("a run folder that attempts.log does not name" in r for r in rows)


def test_a_planted_run_folder_is_named(results: Path) -> None:
    (run,) = (results / "proofs").iterdir()
    shutil.copytree(run, run.parent / (run.name + "-copy"))
    (row,) = log_rows(results)
    assert row.endswith("a run folder that attempts.log does not name")


def test_runs_filed_before_the_log_are_adopted_as_such(results: Path) -> None:
    (results / ATTEMPTS_LOG).unlink()
    assert log_rows(results) == ["corrupt  2 runs and no attempts.log"]
    assert adopt_runs(results) == 2
    with pytest.raises(FileExistsError):
        adopt_runs(results)
    file_run(results)
    lines, problems = read_log(results)
    assert problems == [] and log_rows(results) == []
    assert [line.fields["entry"] for line in lines] == ["adopted", "adopted", "filed"]


def test_a_new_log_adopts_what_it_finds_before_its_first_line(results: Path) -> None:
    (results / ATTEMPTS_LOG).unlink()
    file_run(results)
    lines, _ = read_log(results)
    assert [line.fields["entry"] for line in lines] == ["adopted", "adopted", "filed"]
    assert log_rows(results) == []


def test_the_published_results_log_names_every_run() -> None:
    lines, problems = read_log(ROOT / "results")
    assert problems == [] and lines
    assert log_problems(ROOT / "results") == []
