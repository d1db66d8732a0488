"""Run notebooks with papermill into run directories (the one module that uses papermill).

A run is complete only when all of these hold: papermill exits
0 within the outer timeout, every code cell has an execution count, and no
output is an error. A cell timeout or a dead kernel can leave cells looking
completed, so the check reads the executed notebook rather than trusting it.

A timeout, SIGINT or SIGTERM ends the whole process tree of the run
(papermill, its kernel, the kernel's workers) before the run is filed as
failed; a staging directory left by a runner that was SIGKILLed is filed as
``orphaned`` by the next run (see staging.py).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import papermill
import yaml

from fp8lab.evidence.failures import execution_problems
from fp8lab.evidence.index import write_index
from fp8lab.evidence.parameters import check_overrides, parameters_record
from fp8lab.evidence.report import render_report
from fp8lab.evidence.run_dir import EvidenceRun
from fp8lab.evidence.staging import recover_orphans
from fp8lab.runtime.atomic import write_atomic
from fp8lab.runtime.locations import notebooks_dir
from fp8lab.runtime.parallel import QUIET_THREADS_ENV
from fp8lab.runtime.proctree import (
    TOKEN_ENV,
    SignalInterrupt,
    die_with_parent,
    kill_tree,
    yield_tree,
)

__all__ = [
    "NOTEBOOKS_DIR",
    "REQUIRED_PARAMETERS",
    "CheckedParameters",
    "NotebookRunError",
    "NotebookRun",
    "Stop",
    "discover",
    "execution_problems",
    "notebook_env",
    "notebook_parameters",
    "precedence",
    "run_checked",
    "run_notebook",
    "validate_parameters",
]

NOTEBOOKS_DIR = notebooks_dir()
REQUIRED_PARAMETERS = ("seed", "smoke", "run_dir")
DEFAULT_TIMEOUT = 1800.0
HEARTBEAT_S = 15.0
POLL_S = 0.2  # how often a run's papermill process is looked at
TIMED_OUT = -9999
YIELD_NICE = 10  # side by side, a run without precedence: its processes' nice increment
YIELD_EVERY_S = 1.0  # how often such a run's new sessions (its kernel's) are given that niceness


@dataclass
class Stop:
    """Set when a signal reached the runner: each notebook run going on ends its tree."""

    signum: int = 0


class NotebookRunError(RuntimeError):
    """A notebook run that did not complete; its run is filed under failed/.

    ``folder`` is where it was filed, relative to the results root (``""``
    until it is filed).
    """

    folder: str = ""


@dataclass(frozen=True)
class NotebookRun:
    """Where a finished run went and how it ended."""

    notebook: str
    status: str
    directory: Path
    seconds: float
    reason: str = ""


@dataclass(frozen=True)
class CheckedParameters:
    """A notebook and the override values checked against its parameters cell (once)."""

    path: Path
    overrides: Mapping[str, Any]


def discover(directory: Path = NOTEBOOKS_DIR) -> dict[str, Path]:
    """Every ``*.ipynb`` in ``directory`` by stem, sorted."""
    return {p.stem: p for p in sorted(Path(directory).glob("*.ipynb"))}


def precedence(path: Path) -> str:
    """Why the notebook's threads come first beside another notebook, or ``""``.

    A notebook says so in its metadata, ``{"fp8lab": {"precedence": REASON}}``:
    one whose records depend on a threaded library's threads getting a core the
    moment they wake (a BLAS whose waiting thread spin-waits while its helper
    waits for a core, a timing). Side by side, ``fp8lab evidence`` runs every
    other notebook at ``nice`` +:data:`YIELD_NICE`, so that a thread of this one
    that wakes takes a core from them at once; the order changes no result.

    Raises:
        ValueError: if the notebook cannot be read, or its precedence is not a string.
    """
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path.name}: not a readable notebook ({exc})") from None
    reason = (meta.get("fp8lab") or {}).get("precedence", "") if isinstance(meta, dict) else ""
    if not isinstance(reason, str):
        raise ValueError(f"{path.name}: metadata fp8lab.precedence must be a string (its reason)")
    return reason


def _start_child(parent: int, nice: int) -> None:
    """In papermill's process before it starts: die with ``parent``; yield by ``nice``."""
    die_with_parent(parent)
    if nice:
        os.nice(nice)


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The parameters a notebook declares in its ``parameters`` cell, with defaults.

    Raises:
        ValueError: if the notebook lacks seed, smoke or run_dir.
    """
    declared = papermill.inspect_notebook(str(path))
    missing = [p for p in REQUIRED_PARAMETERS if p not in declared]
    if missing:
        raise ValueError(f"{path.name} does not declare the parameters {missing}")
    return {name: ast.literal_eval(info["default"]) for name, info in declared.items()}


def validate_parameters(path: Path, overrides: Mapping[str, Any]) -> CheckedParameters:
    """Refuse, before anything runs, unknown names, ``run_dir`` and values of the wrong type.

    Returns:
        The checked values, for :func:`run_checked`.

    Raises:
        ValueError: one line naming the parameter (see ``evidence.parameters``).
    """
    check_overrides(path, overrides)
    return CheckedParameters(path, dict(overrides))


def notebook_env(token: str) -> dict[str, str]:
    """The environment of a notebook's processes, marked with ``token`` (its staging directory).

    This process's environment, over :data:`fp8lab.runtime.parallel.QUIET_THREADS_ENV`
    (a variable the environment sets keeps its value).
    """
    env = {**QUIET_THREADS_ENV, **os.environ}
    env.update({"PYDEVD_DISABLE_FILE_VALIDATION": "1", TOKEN_ENV: token})
    return env


def _papermill(
    source: Path,
    target: Path,
    params_file: Path,
    log_path: Path,
    cell_timeout: float,
    timeout: float,
    heartbeat: Callable[[float], None] | None,
    stop: Stop | None = None,
    nice: int = 0,
) -> tuple[int, float]:
    """Run papermill: its exit status (TIMED_OUT after ending the whole tree) and CPU seconds.

    Output goes to ``log_path``, never to a pipe: a process that outlives its
    parent could hold a pipe open and block the reader forever. Every process
    of the run carries the staging directory in ``$FP8LAB_PROCESS_TREE``, so the
    kernel (a session of its own) and the kernel's workers are found and ended
    with papermill on a timeout, a signal, or leftovers after a normal exit.
    The CPU seconds are papermill's, its kernel's and the kernel's workers'
    (each waited for by its parent), this run's alone when runs go side by side.
    Idle OpenMP and OpenBLAS threads sleep rather than spin
    (:data:`fp8lab.runtime.parallel.QUIET_THREADS_ENV`, unless the environment
    sets those variables): a spinning thread of one notebook holds the core the
    other is waiting for.
    ``stop`` (set by the thread a signal reached) ends the tree as the signal would.
    ``nice`` is added to the niceness of papermill and so of every process it
    starts, and is given to every session the run starts (its kernel's) as it
    appears (:func:`fp8lab.runtime.proctree.yield_tree`).
    """
    command = [
        sys.executable,
        "-m",
        "papermill",
        str(source),
        str(target),
        "-f",
        str(params_file),
        "--kernel",
        "python3",
        "--no-progress-bar",
        "--cwd",
        str(source.parent),
        "--execution-timeout",
        str(int(cell_timeout)),
    ]
    token = str(params_file.parent)
    env = notebook_env(token)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            preexec_fn=functools.partial(_start_child, os.getpid(), nice),
        )
    start = time.monotonic()
    beat = start + HEARTBEAT_S
    settle = start  # when the sessions the run starts are next given its niceness
    try:
        while True:
            if nice and time.monotonic() >= settle:
                yield_tree(proc.pid, nice)
                settle += YIELD_EVERY_S
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                kill_tree(proc.pid, token)
                return TIMED_OUT, _reaped(proc)[1]
            if stop is not None and stop.signum:
                raise SignalInterrupt(stop.signum)
            ended = _reap(proc, min(POLL_S, left))
            if ended is not None:
                break
            if heartbeat is not None and time.monotonic() >= beat:
                heartbeat(time.monotonic() - start)
                beat += HEARTBEAT_S
    except BaseException as exc:
        kill_tree(proc.pid, token)
        _reaped(proc)
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, SignalInterrupt):
            raise SignalInterrupt(signal.SIGINT) from exc
        raise
    kill_tree(None, token)  # anything the kernel left behind
    return ended


def _reaped(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    """:func:`_reap` with no limit (the tree has been ended)."""
    ended = _reap(proc, None)
    assert ended is not None  # without a limit it returns only once the process has ended
    return ended


def _reap(proc: subprocess.Popen[bytes], timeout: float | None) -> tuple[int, float] | None:
    """``proc``'s exit status and CPU seconds once it ends within ``timeout`` s (None: no limit).

    ``os.wait4`` gives the usage of that one child and the descendants it
    waited for, which ``RUSAGE_CHILDREN`` cannot when runs go side by side.
    """
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        left = POLL_S if end is None else end - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(POLL_S, left))


def _report(executed: Path, staging: Path) -> None:
    """The report of a failed run, when its executed notebook can be rendered."""
    try:
        html = render_report(executed)
    except Exception:  # noqa: BLE001 - a failed run's report is best effort
        return
    write_atomic(staging / "report.html", html)


def run_notebook(
    path: Path,
    results: Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cell_timeout: float | None = None,
    heartbeat: Callable[[float], None] | None = None,
    index: bool = True,
) -> NotebookRun:
    """Execute one notebook into a new run directory and render its report.

    Args:
        path: the notebook.
        results: the results root.
        overrides: parameter values; names are validated first.
        timeout: outer wall-clock limit for the whole run, in seconds.
        cell_timeout: per-cell limit (default: the outer limit).
        heartbeat: called with the elapsed seconds every 15 s while it runs.
        index: rewrite the results' index after the run (False: the caller
            rewrites it once, after a batch of runs).

    Returns:
        The finished, complete run.

    Raises:
        ValueError: for unknown parameter names (nothing is run or filed).
        NotebookRunError: when the run did not complete; it is filed as failed,
            and the error's ``folder`` says where.
        SignalInterrupt: on SIGINT/SIGTERM (a KeyboardInterrupt); the tree is
            ended and the run filed as failed with the signal as its reason.
    """
    checked = validate_parameters(path, dict(overrides or {}))
    recover_orphans(results)
    return run_checked(
        checked,
        results,
        timeout=timeout,
        cell_timeout=cell_timeout,
        heartbeat=heartbeat,
        index=index,
    )


def run_checked(
    checked: CheckedParameters,
    results: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cell_timeout: float | None = None,
    heartbeat: Callable[[float], None] | None = None,
    index: bool = True,
    stop: Stop | None = None,
    nice: int = 0,
) -> NotebookRun:
    """:func:`run_notebook` for values checked already, orphaned runs already filed.

    A command that runs several notebooks checks every one's values and files
    the orphans once, before the first runs; one that runs them side by side
    gives each the same ``stop``, which a signal sets (the run then ends and is
    filed as the signal would have it), and ``nice`` to each that yields the
    cores to one with :func:`precedence` (its manifest's ``nice``).

    Raises:
        NotebookRunError, SignalInterrupt: as :func:`run_notebook`.
    """
    path = checked.path
    params = {**notebook_parameters(path), **checked.overrides}
    params.pop("run_dir", None)
    t0 = time.monotonic()
    run = EvidenceRun(results, path.stem, params)
    run.extra = {
        "notebook": path.name,
        "notebook_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "timeout_s": timeout,
        "nice": nice,
    }
    try:
        with run:
            write_atomic(run.staging / "parameters.yaml", parameters_record(params))
            # papermill's input names the staging path, which is gone after the rename:
            # it is removed once papermill is done, so the run never records it.
            params_file = write_atomic(
                run.staging / ".papermill-parameters.yaml",
                yaml.safe_dump({**params, "run_dir": str(run.staging)}, sort_keys=True).encode(),
            )
            executed = run.staging / f"{path.stem}.ipynb"
            try:
                code, cpu = _papermill(
                    path,
                    executed,
                    params_file,
                    run.staging / "papermill.log",
                    cell_timeout or timeout,
                    timeout,
                    heartbeat,
                    stop,
                    nice,
                )
            finally:
                params_file.unlink(missing_ok=True)
            # papermill, its kernel and the kernel's workers: all waited for, so all counted
            run.extra["cpu_seconds"] = round(cpu, 3)
            if code == TIMED_OUT:
                first = [f"outer timeout after {timeout:g} s; process tree killed"]
            else:
                first = [f"papermill exited {code}"] if code else []
            problems = first + execution_problems(executed)
            if problems:
                _report(executed, run.staging)
                raise NotebookRunError("; ".join(problems))
            write_atomic(run.staging / "report.html", render_report(executed))
            run.extra["seconds"] = round(time.monotonic() - t0, 3)
    except NotebookRunError as exc:
        if run.final is not None:
            exc.folder = run.final.relative_to(run.results).as_posix()
        raise
    finally:
        if index:
            write_index(results)
    assert run.final is not None
    return NotebookRun(path.stem, "complete", run.final, round(time.monotonic() - t0, 3))
