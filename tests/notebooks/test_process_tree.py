"""A timeout or a signal ends the whole notebook tree and files the run.

Real subprocesses and real signals, on a tiny notebook whose kernel starts a
spawn worker pool (the shape that used to hang ``--timeout``: the workers
outlived papermill's process group and held its output pipe).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.notebooks.trees import (
    finish,
    pids_in,
    pool_notebook,
    start,
    survivors,
    tree,
    wait_for_file,
)

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


@pytest.fixture
def watched() -> Iterator[list[psutil.Process]]:
    """Processes a test saw; any survivor is killed afterwards (the test has failed by then)."""
    procs: list[psutil.Process] = []
    yield procs
    for p in survivors(procs, grace=0):
        p.kill()


def _failed_manifest(results: Path, name: str) -> dict[str, object]:
    runs = list((results / "failed" / name).iterdir())
    assert len(runs) == 1
    manifest: dict[str, object] = json.loads((runs[0] / "manifest.json").read_text())
    return manifest


def _no_staging(results: Path) -> None:
    staging = results / ".staging"
    assert not staging.exists() or not [p for p in staging.iterdir() if p.is_dir()]


def test_timeout_ends_the_kernel_and_its_workers_and_files_the_run(
    tmp_path: Path, watched: list[psutil.Process]
) -> None:
    pidfile = tmp_path / "pids.json"
    pool_notebook(tmp_path / "nb", pidfile)
    results, log = tmp_path / "results", tmp_path / "log"
    argv = ["evidence", "tiny_pool", "--notebooks", str(tmp_path / "nb")]
    proc = start([*argv, "--results", str(results), "--timeout", "15"], tmp_path, log)
    wait_for_file(pidfile, proc, log)
    watched += tree(proc.pid) + [psutil.Process(p) for p in pids_in(pidfile)]
    assert finish(proc, log) == 1, log.read_text()
    assert survivors(watched) == []
    manifest = _failed_manifest(results, "tiny_pool")
    assert "outer timeout after 15 s; process tree killed" in str(manifest["reason"])
    _no_staging(results)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_the_runner_ends_the_tree_files_the_run_and_exits_128_plus_n(
    tmp_path: Path, watched: list[psutil.Process], signum: int, status: int
) -> None:
    pidfile = tmp_path / "pids.json"
    pool_notebook(tmp_path / "nb", pidfile)
    results, log = tmp_path / "results", tmp_path / "log"
    argv = ["evidence", "tiny_pool", "--notebooks", str(tmp_path / "nb")]
    proc = start([*argv, "--results", str(results), "--timeout", "600"], tmp_path, log)
    wait_for_file(pidfile, proc, log)
    watched += tree(proc.pid) + [psutil.Process(p) for p in pids_in(pidfile)]
    os.kill(proc.pid, signum)  # the runner alone, as kill(1), timeout(1) or CI would
    assert finish(proc, log) == status, log.read_text()
    assert survivors(watched) == []
    name = signal.Signals(signum).name
    assert f"interrupted by {name}" in str(_failed_manifest(results, "tiny_pool")["reason"])
    assert f"fp8lab evidence: interrupted by {name}" in log.read_text()
    time.sleep(1.0)  # nothing is left to re-create the staging directory; check it stays gone
    _no_staging(results)


def test_after_sigkill_the_next_run_files_the_orphaned_staging_directory(
    tmp_path: Path, watched: list[psutil.Process]
) -> None:
    from fp8lab.evidence.staging import ORPHANED, recover_orphans

    pidfile = tmp_path / "pids.json"
    pool_notebook(tmp_path / "nb", pidfile)
    results, log = tmp_path / "results", tmp_path / "log"
    argv = ["evidence", "tiny_pool", "--notebooks", str(tmp_path / "nb")]
    proc = start([*argv, "--results", str(results), "--timeout", "600"], tmp_path, log)
    wait_for_file(pidfile, proc, log)
    watched += tree(proc.pid) + [psutil.Process(p) for p in pids_in(pidfile)]
    assert recover_orphans(results) == []  # a live run is never taken for an orphan
    proc.kill()
    assert finish(proc, log) == -signal.SIGKILL
    filed = recover_orphans(results)
    assert len(filed) == 1 and filed[0].parent == results.resolve() / "failed" / "tiny_pool"
    assert survivors(watched) == []
    assert _failed_manifest(results, "tiny_pool")["reason"] == ORPHANED
    assert (filed[0] / "parameters.yaml").is_file()
    _no_staging(results)


def test_a_signal_ends_every_notebook_running_side_by_side_and_files_each(
    tmp_path: Path, watched: list[psutil.Process]
) -> None:
    pidfiles = [tmp_path / "left.json", tmp_path / "right.json"]
    for pidfile in pidfiles:
        pool_notebook(tmp_path / "nb", pidfile, name=pidfile.stem)
    results, log = tmp_path / "results", tmp_path / "log"
    argv = ["evidence", "left", "right", "--jobs", "2", "--notebooks", str(tmp_path / "nb")]
    proc = start([*argv, "--results", str(results), "--timeout", "600"], tmp_path, log)
    for pidfile in pidfiles:  # both kernels and their pools are up at once
        wait_for_file(pidfile, proc, log)
    watched += tree(proc.pid)
    for pidfile in pidfiles:
        watched += [psutil.Process(p) for p in pids_in(pidfile)]
    os.kill(proc.pid, signal.SIGTERM)
    assert finish(proc, log) == 143, log.read_text()
    assert survivors(watched) == []
    for name in ("left", "right"):
        assert "interrupted by SIGTERM" in str(_failed_manifest(results, name)["reason"])
    assert log.read_text().count("fp8lab evidence: interrupted by SIGTERM") == 1
    _no_staging(results)
