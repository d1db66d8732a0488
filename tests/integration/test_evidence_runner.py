"""The evidence runner and its records go red on bad input and never lie.

Most tests replace ``run_notebook`` with a recorder, so they take milliseconds;
the two that execute use tiny notebooks written into ``tmp_path``.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.evidence import EvidenceRun
from fp8lab.evidence import execute as notebooks_module
from fp8lab.evidence.execute import (
    CheckedParameters,
    NotebookRun,
    NotebookRunError,
    run_notebook,
)
from fp8lab.evidence.index import collect_runs, write_index
from fp8lab.evidence.staleness import check_published
from fp8lab.sweeps.range_run import ALL_PATTERNS
from tests.notebooks.conftest import write_notebook

pytestmark = pytest.mark.notebook

EXTRA = "scales: list = [1.0, 0.5]  # a list parameter\nratio: float = 0.5  # a float parameter"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Replace the runner with a recorder; a notebook named ``bad*`` fails."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def fake(checked: CheckedParameters, results: Path, **_: Any) -> NotebookRun:
        path = checked.path
        seen.append((path.stem, dict(checked.overrides)))
        if path.stem.startswith("bad"):
            raise NotebookRunError("cell 1 raised ValueError")
        return NotebookRun(path.stem, "complete", results / path.stem / "r", 0.0)

    # The command imports the runner when it runs (lazy CLI): the fake goes into its home.
    # It checks every notebook's values first, then runs each checked set.
    monkeypatch.setattr(notebooks_module, "run_checked", fake)
    return seen


def notebooks(tmp_path: Path, *names: str) -> Path:
    for name in names:
        write_notebook(tmp_path / "notebooks", name, "x = 1", extra=EXTRA)
    return tmp_path / "notebooks"


def refused_in_one_line(
    argv: list[str],
    word: str,
    capsys: pytest.CaptureFixture[str],
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    """``fp8lab evidence`` exits 2 with one line naming ``word``, before any notebook runs."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err
    assert calls == []


@pytest.mark.parametrize(
    "param",
    ["smoke=3", "seed=true", "seed=1.5", "scales=0.5", "ratio=high", "smoke=null"],
)
def test_a_parameter_of_the_wrong_type_is_refused_before_anything_runs(
    tmp_path: Path,
    calls: list[tuple[str, dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    param: str,
) -> None:
    folder = notebooks(tmp_path, "nb")
    argv = ["evidence", "nb", "-p", param, "--notebooks", str(folder), "--results", str(tmp_path)]
    refused_in_one_line(argv, param.split("=")[0], capsys, calls)


@pytest.mark.parametrize("param", ["seed=7", "smoke=true", "ratio=1", "scales=[0.25]"])
def test_a_parameter_of_the_declared_type_is_accepted(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], param: str
) -> None:
    folder = notebooks(tmp_path, "nb")
    argv = ["evidence", "nb", "-p", param, "--notebooks", str(folder), "--results", str(tmp_path)]
    assert main(argv) == 0
    assert len(calls) == 1


def test_run_dir_is_refused_because_the_runner_owns_it(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = notebooks(tmp_path, "nb")
    argv = ["evidence", "nb", "-p", "run_dir=/tmp/x", "--notebooks", str(folder)]
    assert main([*argv, "--results", str(tmp_path)]) == 2
    assert "run_dir" in capsys.readouterr().err and calls == []


def test_a_params_file_section_applies_to_its_notebook_only(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    folder = notebooks(tmp_path, "first", "second")
    params = tmp_path / "p.yaml"
    params.write_text("first: {seed: 3}\nsecond: {seed: 4, ratio: 0.25}\nsmoke: true\n")
    argv = ["evidence", "first", "--params", str(params), "--notebooks", str(folder)]
    assert main([*argv, "--results", str(tmp_path)]) == 0
    assert calls == [("first", {"seed": 3, "smoke": True})]


def test_every_notebook_runs_and_each_is_reported_when_one_fails(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = notebooks(tmp_path, "bad", "good")
    assert main(["evidence", "--notebooks", str(folder), "--results", str(tmp_path)]) == 1
    assert sorted(name for name, _ in calls) == ["bad", "good"]  # side by side: either first
    captured = capsys.readouterr()
    assert "bad: FAILED" in captured.err and "good: complete" in captured.out


def test_one_job_runs_the_notebooks_one_after_another_in_the_order_named(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    folder = notebooks(tmp_path, "a", "b", "c")
    argv = ["evidence", "c", "a", "b", "--jobs", "1", "--notebooks", str(folder)]
    assert main([*argv, "--results", str(tmp_path)]) == 0
    assert [name for name, _ in calls] == ["c", "a", "b"]


def mark_precedence(path: Path, reason: object) -> None:
    nb = json.loads(path.read_text())
    nb["metadata"]["fp8lab"] = {"precedence": reason}
    path.write_text(json.dumps(nb))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_only_side_by_side_and_only_beside_a_notebook_with_precedence_do_others_yield(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    seen: dict[str, int] = {}

    def fake(checked: CheckedParameters, results: Path, **kw: Any) -> NotebookRun:
        seen[checked.path.stem] = kw.get("nice", 0)
        return NotebookRun(checked.path.stem, "complete", results / checked.path.stem, 0.0)

    monkeypatch.setattr(notebooks_module, "run_checked", fake)
    folder = notebooks(tmp_path, "a", "b", "c")
    argv = ["evidence", "--jobs", jobs, "--notebooks", str(folder), "--results", str(tmp_path)]
    assert main(argv) == 0 and seen == {"a": 0, "b": 0, "c": 0}  # none takes precedence
    mark_precedence(folder / "b.ipynb", "its BLAS threads spin-wait for a core")
    assert main(argv) == 0
    assert seen == ({"a": 0, "b": 0, "c": 0} if jobs == "1" else {"a": 10, "b": 0, "c": 10})


def test_precedence_reads_the_metadata_and_refuses_what_is_not_a_notebook(tmp_path: Path) -> None:
    path = notebooks(tmp_path, "a") / "a.ipynb"
    assert notebooks_module.precedence(path) == ""
    mark_precedence(path, "its threads")
    assert notebooks_module.precedence(path) == "its threads"
    path.write_text('{"metadata": ["not", "a", "mapping"]}')
    assert notebooks_module.precedence(path) == ""
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable notebook"):
        notebooks_module.precedence(path)


@pytest.mark.parametrize("reason", [True, ["threads"], {"why": "threads"}])
def test_a_precedence_that_is_not_a_reason_is_refused_before_anything_runs(
    tmp_path: Path,
    calls: list[tuple[str, dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    reason: object,
) -> None:
    folder = notebooks(tmp_path, "a", "b")
    mark_precedence(folder / "b.ipynb", reason)
    argv = ["evidence", "--notebooks", str(folder), "--results", str(tmp_path)]
    refused_in_one_line(argv, "fp8lab.precedence", capsys, calls)


def test_side_by_side_the_longest_last_run_starts_first(tmp_path: Path) -> None:
    from fp8lab.cli.evidence_cmd import _longest_first

    runs = [("a", "1", 5.0), ("b", "1", 50.0), ("b", "2", 1.0), ("c", "1", 9.0)]
    for kind, run_id, seconds in runs:
        folder = tmp_path / kind / run_id
        folder.mkdir(parents=True)
        manifest = {"kind": kind, "run_id": run_id, "status": "complete", "seconds": seconds}
        manifest |= {"started": "2026", "reason": "", "params": {}, "files": {}}
        (folder / "manifest.json").write_text(json.dumps(manifest))
    # b's newest run counts (1 s), d has none: unknown, so first
    assert _longest_first(["a", "b", "c", "d"], tmp_path) == ["d", "c", "a", "b"]


MEET = """import os, pathlib, time
meet = pathlib.Path({meet!r})
(meet / {me!r}).write_text(str(os.nice(0)))  # the niceness this run's processes got
deadline = time.monotonic() + 120
while not (meet / {other!r}).exists():  # only a notebook running at the same time makes it
    assert time.monotonic() < deadline, "ran alone"
    time.sleep(0.05)
"""
BURN = """start = time.process_time()
while time.process_time() - start < {burn}:  # CPU of this run alone
    pass
"""
WAIT_FOR_FILED = """while not pathlib.Path({filed!r}).exists():  # the other run ended and was filed
    assert time.monotonic() < deadline, "the other run was never filed"
    time.sleep(0.05)
group = pathlib.Path("/proc/self/autogroup")  # the kernel's session, where Linux has autogroups
(meet / "autogroup").write_text(group.read_text() if group.exists() else "")
"""
BURN_S = 2.0


def test_two_jobs_run_side_by_side_and_each_run_is_filed_with_its_own_cpu(tmp_path: Path) -> None:
    meet, folder, results = tmp_path / "meet", tmp_path / "notebooks", tmp_path / "results"
    meet.mkdir()
    left = MEET.format(meet=str(meet), me="left", other="right") + BURN.format(burn=BURN_S)
    right = MEET.format(meet=str(meet), me="right", other="left")
    right += WAIT_FOR_FILED.format(filed=str(results / "left"))  # ends after left's CPU is in
    first = write_notebook(folder, "left", left)
    write_notebook(folder, "right", right)
    mark_precedence(first, "its threads must wake to a free core")
    argv = ["evidence", "--jobs", "2", "--notebooks", str(folder), "--results", str(results)]
    assert main(argv) == 0
    # left takes precedence: right's processes yield to it by nice +10, as its manifest says
    own = os.nice(0)
    assert [int((meet / n).read_text()) for n in ("left", "right")] == [own, min(own + 10, 19)]
    group = (meet / "autogroup").read_text()  # and so does the session its kernel started
    assert not group or group.split()[-1] == "10", group
    runs = {r["kind"]: r for r in collect_runs(results)}
    assert sorted(runs) == ["left", "right"]
    assert all(r["status"] == "complete" for r in runs.values())
    fresh = check_published(results, {n: folder / f"{n}.ipynb" for n in runs}, proofs=False)
    assert [r.status for r in fresh] == ["fresh", "fresh"], fresh  # the attempts log holds both
    manifests = {
        n: json.loads(next((results / n).glob("*/manifest.json")).read_text())
        for n in ("left", "right")
    }
    assert [manifests[n]["nice"] for n in ("left", "right")] == [0, 10]
    cpu = {n: m["cpu_seconds"] for n, m in manifests.items()}
    # each run's own tree: the burner's CPU is in its record and not in the other's
    assert cpu["left"] >= BURN_S and cpu["left"] - cpu["right"] >= BURN_S / 2, cpu


CORRUPT = {
    "truncated": '{"kind": "nb", "status": "comp',
    "null_reason": json.dumps(
        {"kind": "nb", "run_id": "x", "status": "failed", "reason": None, "started": "2026"}
    ),
    "no_status": json.dumps({"kind": "nb", "run_id": "y", "started": "2026"}),
    "not_an_object": "[1, 2]",
}


def plant_corrupt(results: Path) -> None:
    for name, text in CORRUPT.items():
        (results / "nb" / name).mkdir(parents=True)
        (results / "nb" / name / "manifest.json").write_text(text)


def test_a_corrupt_manifest_is_listed_as_corrupt_and_breaks_no_other_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = notebooks(tmp_path, "nb")
    results = tmp_path / "results"
    plant_corrupt(results)
    with EvidenceRun(results, "proofs", {}) as run:
        pass
    write_index(results)  # crashed with a JSONDecodeError
    rows = json.loads((results / "index.json").read_text())
    assert sorted(r["status"] for r in rows) == ["complete"] + ["corrupt"] * len(CORRUPT)
    assert {r["directory"] for r in collect_runs(results) if r["status"] == "corrupt"} == {
        f"nb/{name}" for name in CORRUPT
    }
    checked = check_published(results, {"nb": folder / "nb.ipynb"})
    assert sorted(r.run for r in checked if r.status == "corrupt") == sorted(
        f"nb/{name}" for name in CORRUPT
    )
    argv = ["evidence", "--check", "--results", str(results), "--notebooks", str(folder)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert out.count(": corrupt") == len(CORRUPT) and run.final is not None


def test_a_run_whose_files_no_longer_match_the_manifest_is_corrupt(tmp_path: Path) -> None:
    with EvidenceRun(tmp_path, "proofs", {"stop": ALL_PATTERNS}) as run:
        run.write_json("gates.json", [])
    assert run.final is not None
    (run.final / "gates.json").chmod(0o644)
    (run.final / "gates.json").write_text("[1]\n")
    rows = {r.notebook: r for r in check_published(tmp_path, {})}
    assert rows["proofs"].status == "corrupt" and "gates.json" in rows["proofs"].reason


def test_prove_updates_the_index_and_files_a_stop_run_as_partial(tmp_path: Path) -> None:
    # 3: complete, with G2 PENDING on a machine without CUDA
    assert main(["prove", "--stop", "0x100", "--results", str(tmp_path), "--quiet"]) == 3
    rows = json.loads((tmp_path / "index.json").read_text())
    assert [(r["kind"], r["status"]) for r in rows] == [("proofs", "partial")]
    assert not (tmp_path / "proofs").exists()
    manifest = json.loads((tmp_path / rows[0]["directory"] / "manifest.json").read_text())
    assert manifest["status"] == "partial" and manifest["params"]["stop"] == 0x100


def visible_text(report: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", report.read_text()))


@pytest.mark.slow
def test_a_report_shows_the_parameters_it_ran_with_and_a_smoke_run_says_so_first(
    tmp_path: Path,
) -> None:
    path = write_notebook(tmp_path / "notebooks", "nb", "print('FIRST-CELL-OUTPUT', smoke)")
    plant_corrupt(tmp_path / "results")  # and a corrupt neighbour breaks nothing
    done = run_notebook(path, tmp_path / "results", {"smoke": True, "seed": 5})
    text = visible_text(done.directory / "report.html")
    assert "smoke = True" in text and "seed = 5" in text
    banner = text.find("SMOKE RUN")
    assert 0 <= banner < text.find("smoke: bool = False") < text.find("FIRST-CELL-OUTPUT")
    recorded = (done.directory / "parameters.yaml").read_text()
    assert ".staging" not in recorded and "smoke: true" in recorded
    manifest = json.loads((done.directory / "manifest.json").read_text())
    assert sorted(manifest["files"]) == [
        "nb.ipynb",
        "papermill.log",
        "parameters.yaml",
        "report.html",
    ]  # papermill's own input, which names the staging path, is not kept
    statuses = [r["status"] for r in json.loads((tmp_path / "results" / "index.json").read_text())]
    assert statuses.count("complete") == 1 and statuses.count("corrupt") == len(CORRUPT)


@pytest.mark.slow
def test_a_default_run_report_says_it_ran_at_the_defaults(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "notebooks", "nb", "x = 1")
    done = run_notebook(path, tmp_path / "results")
    text = visible_text(done.directory / "report.html")
    assert "SMOKE RUN" not in text and "default parameters" in text


def test_p_wins_over_a_params_file_section(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    folder = notebooks(tmp_path, "first")
    params = tmp_path / "p.yaml"
    params.write_text("seed: 1\nfirst: {seed: 3, ratio: 0.25}\n")
    argv = ["evidence", "first", "--params", str(params), "-p", "seed=9"]
    assert main([*argv, "--notebooks", str(folder), "--results", str(tmp_path)]) == 0
    assert calls == [("first", {"seed": 9, "ratio": 0.25})]
