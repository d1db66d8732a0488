"""Run notebooks with papermill into run directories (the one module that uses papermill).

A run is complete only when all of these hold (fp8-facts §5): papermill exits
0 within the outer timeout, every code cell has an execution count, and no
output is an error. A cell timeout or a dead kernel can leave cells looking
completed, so the check reads the executed notebook rather than trusting it.
"""

from __future__ import annotations

import ast
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import papermill
import yaml

from fp8lab.evidence.index import write_index
from fp8lab.evidence.parameters import check_overrides, parameters_record
from fp8lab.evidence.report import render_report
from fp8lab.evidence.run_dir import EvidenceRun, write_atomic

__all__ = [
    "NOTEBOOKS_DIR",
    "REQUIRED_PARAMETERS",
    "NotebookRunError",
    "NotebookRun",
    "discover",
    "execution_problems",
    "notebook_parameters",
    "run_notebook",
    "validate_parameters",
]

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
REQUIRED_PARAMETERS = ("seed", "smoke", "run_dir")
DEFAULT_TIMEOUT = 1800.0
HEARTBEAT_S = 15.0
TIMED_OUT = -9999


class NotebookRunError(RuntimeError):
    """A notebook run that did not complete; its run is filed under failed/."""


@dataclass(frozen=True)
class NotebookRun:
    """Where a finished run went and how it ended."""

    notebook: str
    status: str
    directory: Path
    seconds: float
    reason: str = ""


def discover(directory: Path = NOTEBOOKS_DIR) -> dict[str, Path]:
    """Every ``*.ipynb`` in ``directory`` by stem, sorted."""
    return {p.stem: p for p in sorted(Path(directory).glob("*.ipynb"))}


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


def validate_parameters(path: Path, overrides: Mapping[str, Any]) -> None:
    """Refuse, before anything runs, unknown names, ``run_dir`` and values of the wrong type.

    Raises:
        ValueError: one line naming the parameter (see ``evidence.parameters``).
    """
    check_overrides(path, overrides)


def execution_problems(path: Path) -> list[str]:
    """Why an executed notebook is not complete; empty when it is."""
    if not path.exists():
        return ["no executed notebook was written"]
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            problems.append(f"cell {index} never executed")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            problems.append(f"cell {index} raised {errors[0].get('ename', 'an error')}")
    if nb.metadata.get("papermill", {}).get("exception"):
        problems.append("papermill recorded an exception")
    return problems


def _papermill(
    source: Path,
    target: Path,
    params_file: Path,
    cell_timeout: float,
    timeout: float,
    heartbeat: Callable[[float], None] | None,
) -> tuple[int, str]:
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
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=env,
    ) as proc:
        start = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - start)
            try:
                output, _ = proc.communicate(timeout=max(0.0, min(HEARTBEAT_S, left)))
                break
            except subprocess.TimeoutExpired:
                if left <= HEARTBEAT_S:
                    os.killpg(proc.pid, signal.SIGKILL)
                    output, _ = proc.communicate()
                    return TIMED_OUT, f"outer timeout after {timeout:g} s\n{output}"
                if heartbeat is not None:
                    heartbeat(time.monotonic() - start)
    return proc.returncode, output


def run_notebook(
    path: Path,
    results: Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cell_timeout: float | None = None,
    heartbeat: Callable[[float], None] | None = None,
) -> NotebookRun:
    """Execute one notebook into a new run directory and render its report.

    Args:
        path: the notebook.
        results: the results root.
        overrides: parameter values; names are validated first.
        timeout: outer wall-clock limit for the whole run, in seconds.
        cell_timeout: per-cell limit (default: the outer limit).
        heartbeat: called with the elapsed seconds every 15 s while it runs.

    Returns:
        The finished, complete run.

    Raises:
        ValueError: for unknown parameter names (nothing is run or filed).
        NotebookRunError: when the run did not complete; it is filed as failed.
    """
    overrides = dict(overrides or {})
    validate_parameters(path, overrides)
    params = {**notebook_parameters(path), **overrides}
    params.pop("run_dir", None)
    t0 = time.monotonic()
    run = EvidenceRun(results, path.stem, params)
    run.extra = {
        "notebook": path.name,
        "notebook_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "timeout_s": timeout,
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
                code, log = _papermill(
                    path, executed, params_file, cell_timeout or timeout, timeout, heartbeat
                )
            finally:
                params_file.unlink(missing_ok=True)
            write_atomic(run.staging / "papermill.log", log.encode())
            if code == TIMED_OUT:
                first = [f"outer timeout after {timeout:g} s; process group killed"]
            else:
                first = [f"papermill exited {code}"] if code else []
            problems = first + execution_problems(executed)
            if problems:
                raise NotebookRunError("; ".join(problems))
            write_atomic(run.staging / "report.html", render_report(executed))
            run.extra["seconds"] = round(time.monotonic() - t0, 3)
    finally:
        write_index(results)
    assert run.final is not None
    return NotebookRun(path.stem, "complete", run.final, round(time.monotonic() - t0, 3))
