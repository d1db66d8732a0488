from __future__ import annotations

import numpy as np

from fp8lab.bench.encoders import BASELINE, bench_input, run_bench


def test_bench_reports_every_encoder_against_the_baseline() -> None:
    rows = run_bench(n=1 << 12, repeats=1, include_slow=False)
    names = [r.name for r in rows]
    assert BASELINE in names and any("numba" in n for n in names)
    base = next(r for r in rows if r.name == BASELINE)
    assert base.vs_ml_dtypes_clip == 1.0
    # rates and ratios are host facts: printed by the bench, never asserted
    assert all(isinstance(r.melem_per_s, float) for r in rows)


def test_bench_input_is_seeded() -> None:
    a, b = bench_input(1000, 7), bench_input(1000, 7)
    assert np.array_equal(a, b, equal_nan=True)
    assert np.isnan(a).any() or np.isinf(a).any() or (a == 0).any()


def test_brute_bench_times_both_engines_on_one_range() -> None:
    from fp8lab.bench.brute import bench_brute

    b = bench_brute(0.0092, start=0x3B000000, stop=0x3B000000 + 2**20, workers=1)
    assert b.records_equal and b.exposing > 0
    # durations are host facts (a fast host rounds one to 0.0): reported, never asserted
    assert isinstance(b.fused_seconds, float) and isinstance(b.numpy_seconds, float)
