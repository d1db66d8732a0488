"""Real subprocesses and real signals: start a command, wait for its tree, find survivors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.notebooks.conftest import write_notebook

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 120.0  # a run still going after this long is a hang, not a slow machine

# A notebook that starts a spawn worker pool (the shape of codec_atlas) and then
# runs far past any limit a test sets; it writes every pid it knows of.
POOL_CELL = """\
import json, os, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
pool = ProcessPoolExecutor(2, mp_context=get_context("spawn"))
busy = [pool.submit(time.sleep, 600) for _ in range(2)]
while len(pool._processes) < 2:
    time.sleep(0.05)
pids = {{"kernel": os.getpid(), "workers": sorted(pool._processes)}}
with open({tmp!r}, "w") as f:
    json.dump(pids, f)
os.rename({tmp!r}, {pidfile!r})
"""
SLEEP_CELL = "time.sleep(600)"


def pool_notebook(directory: Path, pidfile: Path, name: str = "tiny_pool") -> Path:
    """The tiny notebook with a worker pool, made for the test."""
    cell = POOL_CELL.format(tmp=str(pidfile) + ".tmp", pidfile=str(pidfile))
    return write_notebook(directory, name, cell, SLEEP_CELL)


def start(argv: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    """``python -m fp8lab ARGV`` from this checkout, output to ``log``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(cwd)])}
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "fp8lab", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_for_file(path: Path, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until ``path`` exists; fail if ``proc`` ends first or the hang guard runs out."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not path.exists():
        assert proc.poll() is None, f"ended first ({proc.returncode}):\n{log.read_text()}"
        assert time.monotonic() < deadline, "never got going"
        time.sleep(0.05)


def tree(pid: int) -> list[psutil.Process]:
    """``pid``'s descendants now."""
    return psutil.Process(pid).children(recursive=True)


def pids_in(pidfile: Path) -> list[int]:
    data = json.loads(pidfile.read_text())
    return [int(data["kernel"]), *map(int, data["workers"])]


def survivors(procs: list[psutil.Process], grace: float = 10.0) -> list[psutil.Process]:
    """Those of ``procs`` still running after at most ``grace`` s (a zombie has ended)."""
    deadline = time.monotonic() + grace
    while True:
        left = []
        for p in procs:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(p)
            except psutil.Error:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def finish(proc: subprocess.Popen[bytes], log: Path) -> int:
    """The exit status; a run past the hang guard is killed and fails the test."""
    try:
        return proc.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"hung:\n{log.read_text()}") from None
