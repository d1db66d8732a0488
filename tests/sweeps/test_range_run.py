"""The one range value of the 2**32 and 2**31 runners."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from fp8lab.studies.ecosystem import amax_split
from fp8lab.sweeps.range_run import ALL_PATTERNS, EVERY_PATTERN, RangeRun, sharing_workers


def test_the_default_is_every_pattern_of_the_domain() -> None:
    assert EVERY_PATTERN.bounds() == (0, ALL_PATTERNS)
    assert EVERY_PATTERN.bounds(1 << 31, "amax pattern range") == (0, 1 << 31)


@pytest.mark.parametrize(
    ("run", "domain", "message"),
    [
        (RangeRun(start=5, stop=5), ALL_PATTERNS, r"\[0x5, 0x5\) is empty or outside 2\*\*32"),
        (RangeRun(stop=(1 << 31) + 1), 1 << 31, r"outside 2\*\*31"),
        (RangeRun(start=-1, stop=4), ALL_PATTERNS, "empty or outside"),
        (RangeRun(stop=16, chunk=0), ALL_PATTERNS, "chunk must be at least 1"),
    ],
)
def test_a_bad_range_is_refused(run: RangeRun, domain: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run.bounds(domain)


def test_chunks_tile_every_range_exactly_once() -> None:
    run = RangeRun(chunk=3)
    pieces = run.chunks([(0, 7), (10, 12)])
    assert pieces == [(0, 3), (3, 6), (6, 7), (10, 12)]
    covered = [v for lo, hi in pieces for v in range(lo, hi)]
    assert covered == [*range(7), 10, 11]


def test_placement_names_where_the_chunks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FP8LAB_SCHEDULER", raising=False)
    assert RangeRun(workers=3).placement().workers == 3
    with ThreadPoolExecutor(1) as pool:
        place = RangeRun(workers=1, executor=pool, executor_name="threads").placement()
    assert (place.executor, place.name) == (pool, "threads")
    assert RangeRun().placement().name == "processes"


def test_sharing_workers_gives_back_a_run_that_runs_here_or_names_an_executor() -> None:
    here = RangeRun(start=0, stop=1 << 20, workers=1)
    with sharing_workers(here) as shared:
        assert shared is here
    with ThreadPoolExecutor(1) as pool:
        named = RangeRun(executor=pool)
        with sharing_workers(named) as shared:
            assert shared is named


@pytest.mark.process
def test_sweeps_on_one_shared_pool_give_the_records_made_here() -> None:
    run = RangeRun(start=0x3C00_0000, stop=0x3C00_0000 + (1 << 21), chunk=1 << 19, workers=2)
    pairs = [
        ("torchao-0.18-float8-tensorwise", "vllm-per-tensor"),
        ("torchao-0.18-mxfp8-rceil", "rceil"),
    ]
    here = [amax_split(a, b, replace(run, workers=1)) for a, b in pairs]
    with sharing_workers(run) as shared:
        assert shared.executor is not None and shared.placement().workers == 2
        assert [amax_split(a, b, shared) for a, b in pairs] == here
