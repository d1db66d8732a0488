"""SIGINT or SIGTERM to a pool command's parent alone ends its workers too.

Real subprocesses and real signals: ``fp8lab exhaustive`` with a user encoder
made for the test (it records its worker's pid and sleeps), and ``fp8lab
prove``. Exit 130/143, no worker survives, nothing hangs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.notebooks.trees import HANG_GUARD_S, REPO, finish, start, survivors, tree


@pytest.fixture(autouse=True)
def _no_box(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slow kernels here mark their progress with files, which a boxed kernel cannot write;
    the box's own ending of every process is tested in test_hostile_kernels.py."""
    monkeypatch.setenv("FP8LAB_BOX", "none")


pytestmark = [pytest.mark.process, pytest.mark.slow]

SLOW_ENCODER = """\
import os, pathlib, time
def encode(x):
    (pathlib.Path({seen!r}) / str(os.getpid())).touch()
    time.sleep(600)
"""


def _cmdline(p: psutil.Process) -> str:
    """``p``'s command line, or '' once it has ended (gone, or a zombie not yet reaped)."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _wait(predicate: object, proc: object, log: Path) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not predicate():  # type: ignore[operator]
        assert proc.poll() is None, log.read_text()  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "never got going"
        time.sleep(0.05)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_exhaustive_workers_end_with_the_parent(tmp_path: Path, signum: int, status: int) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    (tmp_path / "slowenc.py").write_text(SLOW_ENCODER.format(seen=str(seen)))
    log = tmp_path / "log"
    argv = ["exhaustive", "slowenc:encode", "scan", "--policy", "sat", "--workers", "2"]
    proc = start([*argv, "--stop", "0x800000", "--quiet"], tmp_path, log)
    watched = [psutil.Process(proc.pid)]
    try:
        _wait(lambda: len(list(seen.iterdir())) >= 2, proc, log)  # two chunks, two workers
        watched += tree(proc.pid)
        os.kill(proc.pid, signum)
        assert finish(proc, log) == status, log.read_text()
        assert survivors(watched) == []
        assert "Traceback" not in log.read_text()
        assert f"interrupted by {signal.Signals(signum).name}" in log.read_text()
    finally:
        for p in survivors(watched, grace=0):
            p.kill()


def test_prove_workers_end_with_the_parent_and_the_run_is_filed(tmp_path: Path) -> None:
    log, results = tmp_path / "log", tmp_path / "results"
    proc = start(["prove", "--results", str(results), "--quiet"], tmp_path, log)

    def workers() -> list[psutil.Process]:
        return [p for p in tree(proc.pid) if "spawn_main" in _cmdline(p)]

    watched = [psutil.Process(proc.pid)]
    try:
        _wait(lambda: len(workers()) >= 1, proc, log)
        watched += tree(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        assert finish(proc, log) == 143, log.read_text()
        assert survivors(watched) == []
        (run,) = (results / "failed" / "proofs").iterdir()
        assert "interrupted by SIGTERM" in (run / "manifest.json").read_text()
    finally:
        for p in survivors(watched, grace=0):
            p.kill()
        proc.wait(timeout=HANG_GUARD_S)  # reaped here, not warned about in a later test


# A signal that lands the moment a worker has started, before the pool has recorded it:
# the worker is one the pool's kill never sees, and the interpreter's exit would wait for it.
SIGNAL_AS_A_WORKER_STARTS = """\
import os, pathlib, signal, sys, time
import multiprocessing.process
from fp8lab.runtime import parallel
from fp8lab.runtime.proctree import SignalInterrupt, install_signal_handlers

START = multiprocessing.process.BaseProcess.start
INIT = parallel._worker_init
SEEN = pathlib.Path({seen!r})

def init_and_say_so(parent):  # in the worker: up, and waiting for a task
    INIT(parent)
    (SEEN / str(os.getpid())).touch()

def start_then_signal(self):  # in the parent: the worker is up, the pool has not recorded it
    START(self)
    deadline = time.monotonic() + 60
    while not (SEEN / str(self.pid)).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGTERM)

if __name__ == "__main__":  # not in the workers, which import this file by another name
    multiprocessing.process.BaseProcess.start = start_then_signal
    parallel._worker_init = init_and_say_so
    install_signal_handlers()
    try:
        parallel.run_tasks(time.sleep, [(600,)] * 4, workers=2)
    except SignalInterrupt as stop:
        print(stop, file=sys.stderr)
        sys.exit(stop.exit_status)
"""


def test_a_signal_as_a_worker_starts_ends_it_too(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    script = tmp_path / "pool_start.py"
    script.write_text(SIGNAL_AS_A_WORKER_STARTS.format(seen=str(seen)))
    log = tmp_path / "log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    assert finish(proc, log) == 143, log.read_text()
    assert log.read_text().strip() == "interrupted by SIGTERM"
    started = [int(p.name) for p in seen.iterdir()]
    assert started  # the first worker's start is where the signal came
    assert [pid for pid in started if _cmdline_of(pid)] == []


def _cmdline_of(pid: int) -> str:
    """The command line of a running ``pid``; '' once it has ended."""
    try:
        return _cmdline(psutil.Process(pid))
    except psutil.Error:
        return ""


SLOW_QUANT = """\
import os, pathlib, time
def quant(x, s):
    (pathlib.Path({seen!r}) / str(os.getpid())).touch()
    time.sleep(600)
"""


def test_detect_workers_end_with_the_parent(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    (tmp_path / "slowq.py").write_text(SLOW_QUANT.format(seen=str(seen)))
    log = tmp_path / "log"
    argv = ["detect", "--scales", "0.13", "--kernels", "reciprocal,slowq:quant", "--workers", "2"]
    proc = start([*argv, "--stop", "0x800000", "--quiet"], tmp_path, log)
    watched = [psutil.Process(proc.pid)]
    try:
        _wait(lambda: len(list(seen.iterdir())) >= 2, proc, log)  # two chunks, two workers
        watched += tree(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        assert finish(proc, log) == 143, log.read_text()
        assert survivors(watched) == []
        assert "Traceback" not in log.read_text()
    finally:
        for p in survivors(watched, grace=0):
            p.kill()
