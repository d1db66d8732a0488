"""make test's time budget, read from ``tests/budget.toml``: slow marks with their reasons.

Each ``[slow]`` entry names a test function (``path::function``, every
parametrisation of it) and says why it costs what it does; at collection the
test gets ``slow(reason=...)``, ahead of any reasonless ``slow`` mark of its
own, so ``make test-fast`` leaves it out and the ledger (tests/ledger.py) shows
the reason. ``[budget]`` gives each folder's seconds of test time, which
``scripts/test-ledger`` prints beside the measured ones.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

BUDGET_FILE = Path(__file__).resolve().parent / "budget.toml"


def load_budget(path: Path = BUDGET_FILE) -> dict[str, dict[str, object]]:
    """The budget file's tables: ``slow`` (test -> reason) and ``budget`` (folder -> seconds)."""
    data = tomllib.loads(path.read_text())
    return {"slow": dict(data.get("slow", {})), "budget": dict(data.get("budget", {}))}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = load_budget()["slow"]
    for item in items:
        reason = slow.get(item.nodeid.split("[", 1)[0])
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=str(reason)), append=False)
