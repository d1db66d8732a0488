"""Run one gate on a foreign kernel in a child process, so its exit is not ours.

A user's kernel (``--kernel MODULE:FUNC``) is imported and called only in a
child ``python -m fp8lab.cli.gate_child REQUEST RESULT``. The child writes the
gate's records as JSON to RESULT and ends with status 0; nothing else counts
as a result. Whatever the kernel does (``SystemExit`` with any status,
``os._exit``, a signal) at import or call time, the parent gets no result and
files a FAIL row naming the status or signal. A module that cannot be
imported is still a usage error (status 2), as in-process.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fp8lab.cli.common import CliError
from fp8lab.gates import CaseResult, GateResult, GateStatus, Offender
from fp8lab.guard import describe
from fp8lab.proctree import die_with_parent

__all__ = ["fault_result", "result_from_dict", "run_foreign_gate"]


def fault_result(gate: str, kernel: str, reason: str) -> GateResult:
    """The FAIL of a gate whose kernel ended the run; it examined nothing."""
    return GateResult(gate, kernel, GateStatus.FAIL, reason, 0, 0, 0, 0, 0, 0)


def result_from_dict(data: dict[str, Any]) -> GateResult:
    """The inverse of :meth:`GateResult.to_dict`."""
    known = {f.name for f in dataclasses.fields(GateResult)}
    values = {k: v for k, v in data.items() if k in known}
    values["status"] = GateStatus(values["status"])
    values["first_offenders"] = tuple(Offender(**o) for o in values.get("first_offenders", ()))
    values["case_results"] = tuple(CaseResult(**c) for c in values.get("case_results", ()))
    return GateResult(**values)


def _how_it_ended(status: int) -> str:
    if status < 0:
        try:
            return f"killed by signal {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exited with status {status}"


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return 2


def _child_env() -> dict[str, str]:
    """The parent's import path, so the child finds the same modules."""
    path = [os.getcwd() if p == "" else p for p in sys.path]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def run_foreign_gate(
    gate: str, spec: str, options: dict[str, Any], nan_policy: str | None = None
) -> list[GateResult]:
    """Run ``GATES[gate]`` on the kernel ``spec`` with ``options`` in a child process.

    ``nan_policy`` is the ``--nan-policy`` the user stated for the kernel.

    Returns:
        The gate's records, or one FAIL record if the child ended without them.

    Raises:
        CliError: if the child reports a usage error (the module cannot be imported).
    """
    request = json.dumps(
        {"gate": gate, "kernel": spec, "options": options, "nan_policy": nan_policy}
    )
    with tempfile.TemporaryDirectory(prefix="fp8lab-gate-") as tmp:
        result = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "fp8lab.cli.gate_child", request, str(result)]
        # the kernel's prints go to stderr: stdout may be carrying --json -
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=_stderr_fd(),
            env=_child_env(),
            preexec_fn=functools.partial(die_with_parent, os.getpid()),
        )
        try:
            status = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if status != 0 or not result.exists():
            ended = _how_it_ended(status)
            return [fault_result(gate, spec, f"kernel process {ended} before a result")]
        payload = json.loads(result.read_text())
    if "usage" in payload:
        raise CliError(payload["usage"])
    if "fault" in payload:
        return [fault_result(gate, spec, f"kernel raised {payload['fault']}")]
    return [result_from_dict(r) for r in payload["results"]]


def _serve(request: dict[str, Any]) -> dict[str, Any]:
    from fp8lab.cli.gates_cmd import load_foreign_kernel
    from fp8lab.gates import GATES

    try:
        scheme = request["options"].get("scheme")
        kernel = load_foreign_kernel(
            request["gate"], request["kernel"], request["nan_policy"], scheme
        )
        result = GATES[request["gate"]](kernel, **request["options"])
    except CliError as exc:
        return {"usage": str(exc)}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import or call is a verdict
        return {"fault": describe(exc)}
    return {"results": [result.to_dict()]}


def main(argv: list[str]) -> None:
    """Child side: serve one request, write the result, end with status 0."""
    request, result = json.loads(argv[0]), Path(argv[1])
    payload = _serve(request)
    tmp = result.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload))
    tmp.rename(result)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no atexit hook of the kernel's module can change the status


if __name__ == "__main__":
    main(sys.argv[1:])
