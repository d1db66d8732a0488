"""The test-time ledger: each test's duration, written by ``make test`` for ``scripts/test-ledger``.

The controlling pytest process (the only one under xdist that sees every
worker's reports) adds up each test's setup, call and teardown and, at the end
of the session, writes one JSON file: ``build/test-ledger.json`` by default,
``$FP8LAB_TEST_LEDGER`` if set. Each entry names the test, its seconds, its
outcome, the worker that ran it and its ``slow`` mark's reason (``None`` when
the test is not marked slow), so a test over the budget says why it is there.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import pytest

LEDGER_ENV = "FP8LAB_TEST_LEDGER"
DEFAULT_LEDGER = Path(__file__).resolve().parent.parent / "build" / "test-ledger.json"

_TESTS: dict[str, dict[str, Any]] = {}
_STARTED = [time.time()]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    _STARTED[0] = time.time()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        mark = item.get_closest_marker("slow")
        reason = None if mark is None else str(mark.kwargs.get("reason", ""))
        item.user_properties.append(("slow_reason", reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _TESTS.setdefault(
        report.nodeid, {"seconds": 0.0, "outcome": "passed", "worker": None, "slow": None}
    )
    entry["seconds"] += float(report.duration)
    entry["worker"] = getattr(report, "node", None) and report.node.gateway.id  # type: ignore[attr-defined]
    for key, value in report.user_properties:
        if key == "slow_reason":
            entry["slow"] = value
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
