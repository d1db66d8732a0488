"""The coverage proof goes red when a chunk is missing, short, duplicated or out of range.

Planted defects: executors that lose, shorten or replay a chunk (a stale result
cache, as a wrongly keyed ``pure=True`` dask task would give). Exhaustive
records then FAIL with ``coverage_error``; brute force raises CoverageError.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest

from fp8lab.detect import brute_force
from fp8lab.sweeps.coverage import CoverageError, covered_ranges
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun

START, STOP, CHUNK = 0x3F80_0000, 0x3F80_0000 + (1 << 16), 1 << 14


class _Planted(Executor):
    """Runs tasks here, but ``defect`` may rewrite a task's arguments first."""

    def __init__(self, defect: Callable[[int, tuple[Any, ...]], tuple[Any, ...]]) -> None:
        self.defect, self.calls = defect, 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*self.defect(self.calls, args), **kwargs))
        self.calls += 1
        return future


def _replay_first(i: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A stale cache: the second task gets the first task's answer."""
    if i == 1:
        return (*args[:-2], START, START + CHUNK)
    return args


def _shorten_last(i: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The last chunk stops one pattern early."""
    if i == (STOP - START) // CHUNK - 1:
        return (*args[:-1], args[-1] - 1)
    return args


def _honest(i: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return args


def test_covered_ranges_merges_a_tiling_and_names_each_defect() -> None:
    chunks = [(0, 4), (8, 12), (4, 8)]
    assert covered_ranges(chunks, 0, 12) == [["0x00000000", "0x0000000c"]]
    with pytest.raises(CoverageError, match=r"\[0x4, 0x8\) were never examined"):
        covered_ranges([(0, 4), (8, 12)], 0, 12)
    with pytest.raises(CoverageError, match="overlaps"):
        covered_ranges([*chunks, (4, 8)], 0, 12)
    with pytest.raises(CoverageError, match=r"\[0x8, 0xc\) were never examined"):
        covered_ranges([(0, 4), (4, 8)], 0, 12)
    with pytest.raises(CoverageError, match="past the range's end"):
        covered_ranges([*chunks, (12, 13)], 0, 12)
    with pytest.raises(CoverageError, match="never examined"):
        covered_ranges([], 0, 12)


def _exhaustive(defect: Callable[[int, tuple[Any, ...]], tuple[Any, ...]]) -> Any:
    return run_exhaustive(
        "fast",
        "scan",
        "e4m3fn",
        saturate=True,
        run=RangeRun(start=START, stop=STOP, chunk=CHUNK, executor=_Planted(defect)),
    )


def test_exhaustive_passes_on_an_honest_executor_and_lists_its_coverage() -> None:
    record = _exhaustive(_honest)
    assert record.status == "PASS" and not record.coverage_error
    assert record.covered == [[f"{START:#010x}", f"{STOP:#010x}"]] and record.chunks == 4


@pytest.mark.parametrize(
    ("defect", "reason"), [(_replay_first, "overlaps"), (_shorten_last, "never examined")]
)
def test_exhaustive_fails_when_a_chunk_is_replayed_or_short(
    defect: Callable[[int, tuple[Any, ...]], tuple[Any, ...]], reason: str
) -> None:
    record = _exhaustive(defect)
    assert record.status == "FAIL"
    assert reason in record.coverage_error
    assert record.mismatches == 0  # nothing else would have made it red


@pytest.mark.parametrize(
    ("defect", "reason"), [(_replay_first, "overlaps"), (_shorten_last, "never examined")]
)
def test_brute_force_refuses_a_replayed_or_short_chunk(
    defect: Callable[[int, tuple[Any, ...]], tuple[Any, ...]], reason: str
) -> None:
    honest = brute_force(
        0.0092, run=RangeRun(start=START, stop=STOP, chunk=CHUNK, executor=_Planted(_honest))
    )
    assert honest.examined == STOP - START and honest.covered
    with pytest.raises(CoverageError, match=reason):
        brute_force(
            0.0092, run=RangeRun(start=START, stop=STOP, chunk=CHUNK, executor=_Planted(defect))
        )
