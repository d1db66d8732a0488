"""The test-time ledger: each test's duration, written by ``make test`` for ``scripts/test-ledger``.

The controlling pytest process (the only one under xdist that sees every
worker's reports) adds up each test's setup, call and teardown and, at the end
of the session, writes one JSON file: ``build/test-ledger.json`` by default,
``$FP8LAB_TEST_LEDGER`` if set. Each entry names the test, its seconds, its
CPU seconds, its outcome, the worker that ran it and its ``slow`` mark's
reason (``None`` when the test is not marked slow), so a test over the budget
says why it is there.

A test's CPU seconds are those of the process that ran it (all its threads)
and of the child processes it waited for, user and system, from setup to
teardown (``getrusage``); a process it started and never waited for is not in
them, nor is a kernel's in a box (the box ends with its namespace, unwaited).
Seconds well above the CPU seconds are time spent waiting (a watchdog, a
timeout, a core another process holds) or in such unwaited processes.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import time
from pathlib import Path
from typing import Any

import pytest

LEDGER_ENV = "FP8LAB_TEST_LEDGER"
DEFAULT_LEDGER = Path(__file__).resolve().parent.parent / "build" / "test-ledger.json"

_TESTS: dict[str, dict[str, Any]] = {}
_STARTED = [time.time()]
_CPU_AT_START = pytest.StashKey[float]()


def _cpu_seconds() -> float:
    """User and system seconds of this process and the children it has waited for."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    _STARTED[0] = time.time()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        mark = item.get_closest_marker("slow")
        reason = None if mark is None else str(mark.kwargs.get("reason", ""))
        item.user_properties.append(("slow_reason", reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Any:
    item.stash[_CPU_AT_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    if call.when == "teardown" and _CPU_AT_START in item.stash:
        spent = _cpu_seconds() - item.stash[_CPU_AT_START]
        outcome.get_result().user_properties.append(("cpu_seconds", spent))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _TESTS.setdefault(
        report.nodeid,
        {"seconds": 0.0, "cpu_seconds": None, "outcome": "passed", "worker": None, "slow": None},
    )
    entry["seconds"] += float(report.duration)
    entry["worker"] = getattr(report, "node", None) and report.node.gateway.id  # type: ignore[attr-defined]
    for key, value in report.user_properties:
        if key == "slow_reason":
            entry["slow"] = value
        elif key == "cpu_seconds":
            entry["cpu_seconds"] = round(float(value), 4)
    if report.outcome != "passed" and entry["outcome"] == "passed":
        entry["outcome"] = (
            report.outcome if report.when == "call" else f"{report.outcome} ({report.when})"
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config) or not _TESTS:
        return
    path = Path(os.environ.get(LEDGER_ENV) or DEFAULT_LEDGER)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "wall_seconds": round(time.time() - _STARTED[0], 3),
        "exit_status": int(exitstatus),
        "args": list(session.config.invocation_params.args),
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "tests": {k: {**v, "seconds": round(v["seconds"], 4)} for k, v in sorted(_TESTS.items())},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(path)
