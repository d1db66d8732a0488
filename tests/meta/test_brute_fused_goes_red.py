"""The fused-vs-twin comparison goes red on planted defects in the fused loop."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from fp8lab.detect import fused
from tests.detect.fused_twin import ranges_that_matter, twin_mismatches

SCALES = (0.9, 448 / 3, 1e-3)


def _red(fmt: str) -> bool:
    return any(twin_mismatches(fmt, s)[2] for s in SCALES)


def test_green_without_a_defect() -> None:
    assert not _red("e4m3fn")


def test_an_off_by_one_encoder_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    good = fused.fused_table

    def off_by_one(fmt: str) -> npt.NDArray[np.uint8]:
        table = good(fmt).copy()
        table[1::2] += np.uint8(1)  # every key with the sticky bit set: one code up
        table.setflags(write=False)  # read-only as the real tables are: the same compiled loop
        return table

    monkeypatch.setattr(fused, "fused_table", off_by_one)
    assert _red("e4m3fn")


def _dropping(keep: object) -> object:
    real = fused._fused_loop

    def loop(start, stop, r, s, a_div, b_div, table, *rest):  # type: ignore[no-untyped-def]
        found = real(start, stop, r, s, a_div, b_div, table, *rest)
        x = found.view(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            q, d = (x * r).view(np.uint32), (x / s).view(np.uint32)
        return found[keep(found, q, d)]  # type: ignore[operator]

    return loop


@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2"])
def test_skipping_the_ties_goes_red(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    # a key without the sticky bit: scaled values that differ only below the top
    # 16 bits (one of them exactly on a midpoint) are never looked up
    monkeypatch.setattr(fused, "_fused_loop", _dropping(lambda f, q, d: (q >> 16) != (d >> 16)))
    assert _red(fmt)


def test_skipping_negative_inputs_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fused, "_fused_loop", _dropping(lambda f, q, d: f < np.uint32(1 << 31)))
    assert _red("e4m3fn")


def test_skipping_subnormal_results_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    # an encoder that ignores fp8-subnormal targets (|y| below the smallest normal 2**-6)
    tiny = np.uint32(np.array(2.0**-6, np.float32).view(np.uint32))
    keep = lambda f, q, d: (q & np.uint32(0x7FFFFFFF)) >= tiny  # noqa: E731
    monkeypatch.setattr(fused, "_fused_loop", _dropping(keep))
    assert _red("e4m3fn")


def test_brute_bench_notices_unequal_records(monkeypatch: pytest.MonkeyPatch) -> None:
    from fp8lab.bench.brute import bench_brute

    monkeypatch.setattr(fused, "_fused_loop", _dropping(lambda f, q, d: f < np.uint32(1 << 31)))
    b = bench_brute(0.0092, start=0xBB000000, stop=0xBB000000 + 2**20, workers=1)
    assert not b.records_equal


def _skip_both_ways(table: npt.NDArray[np.uint8]) -> tuple[list[bytes], list[bytes]]:
    s = np.float32(0.9)
    r = np.float32(np.float32(1.0) / s)
    ranges = [(lo, hi) for lo, hi in ranges_that_matter("e4m3fn", 0.9)]
    ranges += [(0x3F000000, 0x3F100000), (0xBF000000, 0xBF100000)]
    args = [(lo, hi, r, s, False, True, table) for lo, hi in ranges]
    skipped = [fused._fused_loop(*a, True).tobytes() for a in args]
    computed = [fused._fused_loop(*a, False).tobytes() for a in args]
    return skipped, computed


def test_skipping_blocks_of_a_table_without_runs_goes_red() -> None:
    # the block skip is exact only where each code's keys form one run per sign;
    # planted: every key without the sticky bit one code up, and the guard ignored
    table = fused.fused_table("e4m3fn")
    assert fused.runs_per_sign(table)
    skipped, computed = _skip_both_ways(table)
    assert skipped == computed  # green: the real table
    planted = table.copy()
    planted[0::2] += np.uint8(1)
    assert not fused.runs_per_sign(planted)
    skipped, computed = _skip_both_ways(planted)
    assert skipped != computed
