"""The evidence pipeline end to end: smoke runs, failure modes, determinism, the index."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import nbformat
import pytest

from fp8lab.cli.main import main
from fp8lab.evidence.execute import (
    NOTEBOOKS_DIR,
    NotebookRun,
    NotebookRunError,
    discover,
    execution_problems,
    run_notebook,
)
from fp8lab.evidence.index import collect_runs
from fp8lab.evidence.proofs import PROOF_PLAN
from fp8lab.evidence.sidecar import from_hex_floats
from fp8lab.sweeps.range_run import ALL_PATTERNS
from tests.evidence.test_published_proofs import proofs_run
from tests.notebooks.conftest import write_filing_notebook, write_notebook

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def tables(run: Path, name: str) -> list[dict[str, object]]:
    return json.loads((run / "tables" / f"{name}.json").read_text())


def test_codec_atlas_smoke_run_is_complete(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "codec_atlas.ipynb", tmp_path, {"smoke": True})
    manifest = json.loads((done.directory / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["params"]["smoke"] is True
    assert manifest["cpu_seconds"] > 0  # the kernel's CPU time, counted through papermill
    records = tables(done.directory, "exhaustive")
    assert len(records) == len(PROOF_PLAN) == 26
    assert all(r["mismatches"] == 0 and r["examined"] == 0x40000 for r in records)
    codes = tables(done.directory, "codes_e4m3fn")
    assert from_hex_floats(codes[0x7E]["value"]) == 448.0  # type: ignore[arg-type]
    assert len(list((done.directory / "figures").glob("*.svg"))) == 8
    assert (done.directory / "report.html").stat().st_size < 5_000_000
    for name in manifest["files"]:
        assert (done.directory / name).is_file()


def test_codec_atlas_at_defaults_shows_the_fresh_proofs_run_instead_of_proving(
    tmp_path: Path,
) -> None:
    planted = proofs_run(tmp_path)  # make evidence runs fp8lab prove before the notebooks
    done = run_notebook(NOTEBOOKS_DIR / "codec_atlas.ipynb", tmp_path)
    manifest = json.loads((done.directory / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["params"]["smoke"] is False
    records = tables(done.directory, "exhaustive")
    assert [r["examined"] for r in records] == [ALL_PATTERNS] * len(PROOF_PLAN)
    walls = {from_hex_floats(r["wall_seconds"]) for r in records}  # type: ignore[arg-type]
    assert walls == {1.5}  # the planted records, not proved again
    summary = json.loads((done.directory / "tables" / "report_summary.json").read_text())
    assert planted.name in json.dumps(summary)


def test_two_runs_at_once_are_distinct_complete_and_render_identically(tmp_path: Path) -> None:
    outcomes: list[NotebookRun] = []
    path = write_filing_notebook(tmp_path / "nb", "gate_g1")

    def one() -> None:
        outcomes.append(run_notebook(path, tmp_path))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 2
    a, b = (o.directory for o in outcomes)
    assert a != b and a.parent == b.parent == tmp_path / "gate_g1"
    assert (a / "report.html").read_bytes() == (b / "report.html").read_bytes()
    assert tables(a, "rows") == tables(b, "rows") == [{"seed": 0, "square": 0}]
    rows = collect_runs(tmp_path, {"gate_g1": path})
    assert [r["status"] for r in rows] == ["complete", "complete"]
    assert rows[0]["started"] >= rows[1]["started"]
    assert "report.html" in (tmp_path / "index.html").read_text()


@pytest.mark.parametrize(
    ("source", "timeout", "reason"),
    [
        ("raise ValueError('planted')", 120, "ValueError"),
        ("import time\ntime.sleep(120)", 8, "timeout"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", 120, "papermill exited"),
    ],
)
def test_failed_runs_are_filed_as_failed_with_the_reason(
    tmp_path: Path, source: str, timeout: float, reason: str
) -> None:
    path = write_notebook(tmp_path / "nb", "broken", source, "print('after')")
    with pytest.raises(NotebookRunError, match=reason):
        run_notebook(path, tmp_path / "results", timeout=timeout)
    failed = list((tmp_path / "results" / "failed" / "broken").iterdir())
    assert len(failed) == 1
    manifest = json.loads((failed[0] / "manifest.json").read_text())
    assert manifest["status"] == "failed" and reason in manifest["reason"]
    assert not (tmp_path / "results" / "broken").exists()
    assert collect_runs(tmp_path / "results")[0]["status"] == "failed"


def test_cells_marked_complete_without_execution_are_caught(tmp_path: Path) -> None:
    path = write_notebook(tmp_path, "never_ran", "x = 1")
    problems = execution_problems(path)
    assert problems == ["cells 1, 2 never executed"]  # numbered as the user sees them
    assert execution_problems(tmp_path / "absent.ipynb") == ["no executed notebook was written"]


def test_unknown_parameter_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="unknown parameters"):
        run_notebook(NOTEBOOKS_DIR / "gate_g1.ipynb", tmp_path, {"sede": 1})
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    argv = ["evidence", "gate_g1", "-p", "sede=1", "--results", str(tmp_path)]
    assert main(argv) == 2
    assert "unknown parameters ['sede']" in capsys.readouterr().err
    assert main(["evidence", "no_such_notebook", "--results", str(tmp_path)]) == 2


def test_cli_runs_with_a_params_file_and_checks_staleness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notebooks = tmp_path / "notebooks"
    write_filing_notebook(notebooks, "gate_g1")
    write_notebook(notebooks, "tie_sweep", extra="n_scales: int = 2000  # scales")
    results = tmp_path / "results"
    params = tmp_path / "p.yaml"
    params.write_text("gate_g1:\n  seed: 0\ntie_sweep:\n  n_scales: 10\n")  # gate_g1's default
    base = ["--results", str(results), "--notebooks", str(notebooks)]
    assert main(["evidence", "--check", "gate_g1", *base]) == 1  # nothing published yet
    assert main(["evidence", "gate_g1", "--params", str(params), *base]) == 0
    out = capsys.readouterr().out
    assert "gate_g1: running" in out and "index:" in out
    run = next((results / "gate_g1").iterdir())
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["params"]["seed"] == 0 and "n_scales" not in manifest["params"]
    assert main(["evidence", "--check", "gate_g1", *base]) == 0
    assert "gate_g1: fresh" in capsys.readouterr().out
    path = discover(notebooks)["gate_g1"]
    path.write_text(path.read_text().replace("square", "squared"))
    assert main(["evidence", "--check", "gate_g1", *base]) == 1
    assert "notebook changed" in capsys.readouterr().out


def test_interactive_run_with_defaults_writes_to_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papermill

    monkeypatch.setenv("FP8LAB_SCRATCH", str(tmp_path / "scratch"))
    path = write_filing_notebook(tmp_path / "nb", "gate_g1")
    papermill.execute_notebook(
        str(path),
        str(tmp_path / "out.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        cwd=str(path.parent),
    )
    assert execution_problems(tmp_path / "out.ipynb") == []
    runs = list((tmp_path / "scratch").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("gate_g1-")
    assert (runs[0] / "tables" / "rows.json").is_file()
    printed = [
        o.get("text", "")
        for c in nbformat.read(tmp_path / "out.ipynb", as_version=4).cells
        for o in c.get("outputs", [])
    ]
    assert any(f"tables and figures go to {runs[0]}" in t for t in printed)


def test_detector_notebook_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "divide_vs_reciprocal.ipynb", tmp_path, {"smoke": True})
    checks = tables(done.directory, "enumeration_vs_brute")
    assert len(checks) >= 30 and all(c["equal"] and c["examined"] > 0 for c in checks)
    counts = {
        from_hex_floats(r["scale"]): r["count"] for r in tables(done.directory, "table_scales")
    }  # type: ignore[arg-type]
    assert sorted(counts.values()) == [0, 30, 60, 118, 128]
    golden = list((done.directory / "golden").iterdir())
    assert sorted(p.suffix for p in golden) == [".json", ".npz"]


def test_sweep_notebook_smoke_run(tmp_path: Path) -> None:
    import numpy as np

    done = run_notebook(NOTEBOOKS_DIR / "tie_sweep.ipynb", tmp_path, {"smoke": True})
    summary = tables(done.directory, "summary")[0]
    assert summary["scales"] == 2000 and summary["powers_of_two_exposing"] == 0
    with np.load(done.directory / "arrays" / "sweep.npz") as data:
        assert data["count"].size == 2000 and data["scales"].dtype == np.float32


def test_mutation_notebook_smoke_run(tmp_path: Path) -> None:
    # G1 and G3 only: GQ's and GF's catalogue (the notebook's default gates add them) is judged,
    # each mutant KILLED with margin >= 3, in tests/mutants/test_scheme_chain_mutants.py
    params = {"smoke": True, "gates": ["G1", "G3"]}
    done = run_notebook(NOTEBOOKS_DIR / "mutation.ipynb", tmp_path, params)
    rows = tables(done.directory, "catalogue")
    assert rows and all(r["verdict"] == "KILLED" and r["failed_assertions"] >= 3 for r in rows)
    seed = {r["id"]: r for r in tables(done.directory, "seed_table")}
    assert seed["M2"]["seed_failed"] == 6 and seed["M2"]["failed"] == 8  # 4 + the shard case


def test_a_relative_results_root_still_collects_the_notebook_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_filing_notebook(tmp_path / "nb", "gate_g1")
    monkeypatch.chdir(tmp_path)  # papermill runs the kernel in the notebook's folder, not here
    done = run_notebook(path, Path("results"))
    assert done.directory.is_absolute() and done.directory.is_relative_to(tmp_path)
    manifest = json.loads((done.directory / "manifest.json").read_text())
    assert "tables/rows.json" in manifest["files"]
    assert any(name.startswith("figures/") for name in manifest["files"])
    assert not (path.parent / "results").exists()
