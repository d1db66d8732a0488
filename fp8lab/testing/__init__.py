"""fp8lab inside your own tests: :func:`assert_gate`, and a pytest plugin that files the records.

``assert_gate("G1", my_kernel)`` runs the gate in this process and returns its
record, or raises ``AssertionError`` whose message is the gate's table row,
its reason and its first offenders in hex, in the manner of ``numpy.testing``.
With the plugin (installed with fp8lab), ``pytest --fp8lab-results DIR`` files
the record of every ``assert_gate`` of the session as JSON under DIR.
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any

from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.kernels.sources.loaders import as_kernel
from fp8lab.runtime.atomic import write_atomic
from fp8lab.specs.gates import gate as gate_record
from fp8lab.specs.gates import load

__all__ = ["assert_gate", "filing_records_to"]

_RESULTS: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "fp8lab_testing_results", default=None
)


def filing_records_to(folder: Path | None) -> None:
    """File the record of every later :func:`assert_gate` under ``folder`` (None: stop)."""
    _RESULTS.set(folder)


def _message(result: GateResult) -> str:
    lines = [
        f"{result.gate} {result.kernel}: {result.status.value}: {result.cases} cases, "
        f"{result.assertions_failed} of {result.assertions} assertions failed, "
        f"{result.mismatches} mismatches in {result.words} words",
    ]
    if result.reason:
        lines.append(f"reason: {result.reason}")
    for o in result.first_offenders[:8]:
        lines.append(f"  {o.case} {o.word_class} {o.where()} got {o.got} want {o.want}")
    return "\n".join(lines)


def _file(result: GateResult) -> None:
    folder = _RESULTS.get()
    if folder is None:
        return
    kernel = "".join(c if c.isalnum() or c in "-_." else "_" for c in result.kernel)
    for n in range(10_000):
        path = folder / f"{result.gate}-{kernel}-{n}.json"
        if not path.exists():
            write_atomic(path, json.dumps(result.to_dict(), indent=2, sort_keys=True).encode())
            return


def assert_gate(gate: str, kernel: Any, **options: Any) -> GateResult:
    """Run ``gate`` on ``kernel`` in this process; its record, or ``AssertionError``.

    A bare function is wrapped as its gate's kernel (G1: a ``FunctionKernel``,
    whose ``nan_policy`` attribute, read here, says its NaN policy).

    Args:
        gate: a gate of :mod:`fp8lab.specs.gates` (``G1``, ``G2``, ``G2h``, ``G3``, ``GF``, ``GQ``).
        kernel: what the gate takes (a QuantKernel or ``FUNC(x, scale)`` for G1, ...).
        options: the gate's keywords (``nan_policy`` a ``NanPolicy``, ``scheme``, ``rule``, ...).

    Raises:
        AssertionError: if the gate does not PASS (PENDING included: owed, not passed).
        KeyError: for an unknown gate.
    """
    __tracebackhide__ = True  # a failure points at the caller's test, not in here
    record = gate_record(gate)
    kernel = as_kernel(record.kind, getattr(kernel, "__name__", "kernel"), kernel)
    result: GateResult = load(record.runner)(kernel, **options)
    _file(result)
    if result.status is not GateStatus.PASS:
        raise AssertionError(_message(result))
    return result
