from __future__ import annotations

import numpy as np
import pytest

from fp8lab.detect import brute_force, candidate_inputs, enumerate_exposing, midpoint_table
from fp8lab.detect.brute import exposing_in_chunk
from fp8lab.detect.pair import resolve_kernel
from fp8lab.detect.sweep import sweep_batch
from fp8lab.specs.formats import FP8_FORMATS
from fp8lab.sweeps.range_run import RangeRun

from .conftest import MANY_SCALES, TABLE

SIGN = 0x80000000
HALF = 96  # patterns either side of m*s: about 10x the candidate window


def _bands(scale: float, fmt: str = "e4m3fn") -> np.ndarray:
    """Every pattern within HALF of fl(m*s), for each midpoint and both signs."""
    mids = midpoint_table(fmt).values
    with np.errstate(over="ignore"):
        centres = (mids * np.float32(scale)).astype(np.float32).view(np.uint32).astype(np.int64)
    bits = (centres[:, None] + np.arange(-HALF, HALF + 1)).reshape(-1)
    bits = np.unique(np.clip(bits, 0, 0x7F800000)).astype(np.uint32)
    return np.concatenate([bits, bits | np.uint32(SIGN)])


def _brute(scale: float, bits: np.ndarray, fmt: str = "e4m3fn") -> np.ndarray:
    x = bits.view(np.float32)
    s = np.float32(scale)
    a, b = resolve_kernel("reciprocal", fmt), resolve_kernel("divide", fmt)
    return np.sort(bits[a.quantize(x, s) != b.quantize(x, s)])


def _enumerated(scale: float) -> np.ndarray:
    return np.array([int(v, 16) for v in enumerate_exposing(scale).inputs], np.uint32)


def test_at_least_30_scales() -> None:
    assert len(set(MANY_SCALES)) >= 30


@pytest.mark.parametrize("scale", MANY_SCALES)
def test_enumeration_equals_brute_force_around_every_midpoint(scale: float) -> None:
    bands = _bands(scale)
    found = _enumerated(scale)
    assert np.isin(found, bands).all(), "an exposing input outside every band"
    assert np.array_equal(_brute(scale, bands), found)


@pytest.mark.parametrize("scale", MANY_SCALES[::3])
def test_random_chunks_hold_nothing_the_enumeration_misses(scale: float) -> None:
    rng = np.random.default_rng(int(np.float32(scale).view(np.uint32)))
    found = set(_enumerated(scale).tolist())
    for lo in rng.integers(0, 2**32 - 2**16, 4):
        got = exposing_in_chunk("reciprocal", "divide", "e4m3fn", scale, int(lo), int(lo) + 2**16)
        assert set(got.tolist()) == {v for v in found if lo <= v < lo + 2**16}


@pytest.mark.parametrize(("scale", "count"), TABLE.items())
def test_enumeration_reproduces_the_issue_table(scale: float, count: int) -> None:
    record = enumerate_exposing(scale)
    assert record.count == count == len(record.inputs)
    assert record.examined > 1000


@pytest.mark.process
def test_brute_force_on_a_dense_range_with_a_pool() -> None:
    s = 0.13
    centre = int(enumerate_exposing(s).inputs[5], 16)  # a midpoint's neighbourhood
    record = brute_force(
        s, run=RangeRun(start=centre - 2**18, stop=centre + 2**18, chunk=2**17, workers=2)
    )
    want = [
        v for v in enumerate_exposing(s).inputs if centre - 2**18 <= int(v, 16) < centre + 2**18
    ]
    assert record.examined == 2**19 and list(record.inputs) == want and record.count > 0


def test_brute_force_positive_binade_at_0_77_in_process() -> None:
    """All of [0.5, 1) * s at s = 0.77 (2**23 patterns) against the enumeration."""
    s = 0.77
    lo = int(np.float32(0.5 * s).view(np.uint32))
    hi = int(np.float32(1.0 * s).view(np.uint32))
    record = brute_force(s, run=RangeRun(start=lo, stop=hi, chunk=2**22, workers=1))
    want = [v for v in enumerate_exposing(s).inputs if lo <= int(v, 16) < hi]
    assert list(record.inputs) == want and record.count > 0


def test_candidates_are_symmetric_and_small() -> None:
    bits = candidate_inputs(0.0092)
    positive = bits[bits < SIGN]
    assert np.array_equal(positive | np.uint32(SIGN), bits[bits >= SIGN])
    assert bits.size < 127 * 2 * 20


@pytest.mark.parametrize("fmt", sorted(FP8_FORMATS))
@pytest.mark.parametrize("scale", [0.0092, 0.77, 3.0])
def test_every_format_enumeration_brute_and_sweep_agree(fmt: str, scale: float) -> None:
    record = enumerate_exposing(scale, fmt=fmt)
    found = np.array([int(v, 16) for v in record.inputs], np.uint32)
    assert np.array_equal(_brute(scale, _bands(scale, fmt), fmt), found)
    assert sweep_batch(np.array([scale], np.float32), fmt)["count"][0] == record.count
