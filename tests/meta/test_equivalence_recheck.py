"""The re-check of justified source mutants rejects every mutant a gate kills.

Each source mutant that G1 or G3 kills is presented as if someone had
justified it as equivalent; the re-check must reject every one of them.
"""

from __future__ import annotations

import pytest

from fp8lab.gates.records import MutantVerdict
from fp8lab.mutants.report import check_equivalent
from fp8lab.mutants.runner import SOURCE_MODULES, Equivalent, run_source
from fp8lab.mutants.source import source_mutations

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def killed() -> list[tuple[str, Equivalent]]:
    results = run_source(("G1", "G3"))
    sites = {m.key: m for module in SOURCE_MODULES for m in source_mutations(module)}
    chosen = []
    for r in results:
        if r.verdict is MutantVerdict.KILLED:
            m = sites[r.id]
            chosen.append((r.id, Equivalent(r.id, m.original, m.replacement, "presented")))
    return chosen


def test_killed_source_mutants_cover_every_module(killed: list[tuple[str, Equivalent]]) -> None:
    modules = {key.split(":", 1)[0] for key, _ in killed}
    assert modules == set(SOURCE_MODULES)
    assert len(killed) >= 40


def test_every_killed_source_mutant_presented_as_justified_is_rejected(
    killed: list[tuple[str, Equivalent]],
) -> None:
    accepted, crashed = [], []
    for key, entry in killed:
        try:
            check_equivalent(key, entry)
        except AssertionError:
            continue  # rejected, as it must be
        except Exception as exc:  # noqa: BLE001 - a crash is not a verdict
            crashed.append(f"{key}: {type(exc).__name__}")
        else:
            accepted.append(key)
    assert not crashed, crashed
    assert not accepted, accepted
