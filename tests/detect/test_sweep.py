from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from fp8lab.detect import describe_sweep, enumerate_exposing, log_scales, sweep
from fp8lab.detect.sweep import sweep_batch

from .conftest import MANY_SCALES, TABLE


def test_vectorised_twin_equals_the_kernels() -> None:
    scales = np.array(MANY_SCALES, np.float32)
    cols = sweep_batch(scales)
    for i, s in enumerate(MANY_SCALES):
        record = enumerate_exposing(s)
        on = [c.on_midpoint for c in record.classes]
        assert cols["count"][i] == record.count
        assert cols["divide_on"][i] == on.count("divide")
        assert cols["reciprocal_on"][i] == on.count("reciprocal")
        assert cols["midpoints"][i] == len(
            {(c.midpoint, c.input[2] >= "8") for c in record.classes}
        )


def test_sweep_table_and_executors_agree() -> None:
    serial = sweep(list(TABLE), workers=1)
    assert serial.columns["count"].tolist() == list(TABLE.values())
    grid = log_scales(3000)
    with ThreadPoolExecutor(2) as pool:
        pooled = sweep(grid, pool, batch=500)
    alone = sweep(grid, workers=1)
    for k in alone.columns:
        assert np.array_equal(pooled.columns[k], alone.columns[k])


def test_structure_on_a_grid() -> None:
    facts = describe_sweep(sweep(log_scales(4001), workers=1))
    assert facts["powers_of_two"] >= 2 and facts["powers_of_two_exposing"] == 0
    assert facts["exact_reciprocals_exposing"] == 0
    assert facts["both_on_midpoint"] == facts["strictly_straddling"] == 0
    assert facts["corr_count_abs_error"] > 0.5
    assert "scales" in facts["text"]


def test_sweep_over_nothing_or_bad_scales_is_an_error() -> None:
    with pytest.raises(ValueError, match="no scales"):
        sweep([])
    with pytest.raises(ValueError, match="not positive"):
        sweep([1.0, -2.0])
    with pytest.raises(ValueError, match="collide"):
        log_scales(10, 1.0, 1.0000001)


def test_record_json() -> None:
    row = sweep([0.13, 1.0], workers=1).to_dict()
    assert row["count"] == [118, 0] and row["scales_hex"][1] == "0x1.0000000000000p+0"


def test_exposure_is_invariant_under_powers_of_two() -> None:
    sig = np.random.default_rng(11).uniform(1.0, 2.0, 300).astype(np.float32)
    base = sweep_batch(sig)
    for k in (-100, -20, -3, 5, 20, 100):
        moved = sweep_batch((sig.astype(np.float64) * 2.0**k).astype(np.float32))
        for name, col in base.items():
            assert np.array_equal(moved[name], col), (k, name)


def test_per_midpoint_exposure_adds_up_to_the_midpoint_column() -> None:
    from fp8lab.detect import log_scales, sweep

    record = sweep(log_scales(300), workers=1)
    assert record.midpoints.size == record.scales_exposing_midpoint.size == 127
    assert 2 * int(record.scales_exposing_midpoint.sum()) == int(record.columns["midpoints"].sum())
    assert record.scales_exposing_midpoint.max() <= 300
