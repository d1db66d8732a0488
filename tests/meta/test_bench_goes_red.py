"""``bench --brute`` and ``bench --all`` time two engines; a disagreement between them is red.

The benchmark's one check is that the fused engine and its numpy twin build the
same record. A numpy engine planted to count one exposure more must make the
record comparison false and the command exit 1 (never a green figure).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import fp8lab.bench.brute as brute_bench
from fp8lab.cli.main import main

REAL = brute_bench.brute_force


def _numpy_counts_one_more(scale: float, **kw: Any) -> Any:
    record = REAL(scale, **kw)
    if kw.get("engine") == "numpy":
        return dataclasses.replace(record, count=record.count + 1)
    return record


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brute_bench, "brute_force", _numpy_counts_one_more)


@pytest.mark.usefixtures("planted")
def test_a_disagreeing_twin_makes_the_records_unequal() -> None:
    assert not brute_bench.bench_brute(0.9, stop=1 << 14, workers=1).records_equal


@pytest.mark.slow
@pytest.mark.usefixtures("planted")
def test_bench_all_exits_1_when_the_engines_disagree(tmp_path: Path) -> None:
    argv = ["bench", "--all", "--stop", "0x4000", "--sample", "0x400", "-n", "1024"]
    argv += ["--repeats", "1", "--workers", "1", "--no-startup", "--results", str(tmp_path)]
    assert main(argv) == 1


def test_unplanted_the_records_agree() -> None:
    assert brute_bench.bench_brute(0.9, stop=1 << 14, workers=1).records_equal
