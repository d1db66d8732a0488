from __future__ import annotations

import numpy as np

from fp8lab.bench.encoders import (
    BASELINE,
    TARGET_VS_TORCH,
    TORCH,
    bench_input,
    run_bench,
    single_thread,
)
from fp8lab.cli.bench_cmd import report_lines


def test_bench_reports_every_encoder_against_the_baseline() -> None:
    report = run_bench(n=1 << 12, repeats=2, include_slow=False)
    names = [r.name for r in report.rows]
    assert BASELINE in names and any("numba" in n for n in names)
    assert any("bits" in n for n in names)
    base = next(r for r in report.rows if r.name == BASELINE)
    assert base.vs_ml_dtypes_clip == 1.0
    # rates and ratios are host facts: printed by the bench, never asserted
    assert all(isinstance(r.melem_per_s, float) for r in report.rows)
    assert report.rounds == 2 and any(p.startswith("numba threads 1") for p in report.pinned)


def test_bench_rows_carry_the_torch_ratio_its_spread_and_the_target() -> None:
    report = run_bench(n=1 << 12, repeats=3, include_slow=False)
    has_torch = report.torch is not None
    assert (TORCH in [r.name for r in report.rows]) == has_torch
    assert any(p.startswith("torch threads 1") for p in report.pinned) == has_torch
    for r in report.rows:
        spread = (r.vs_torch, r.vs_torch_min, r.vs_torch_max, r.vs_torch_q1, r.vs_torch_q3)
        assert all((v is not None) == has_torch for v in spread), r.name
        if has_torch:
            assert r.vs_torch_min <= r.vs_torch_q1 <= r.vs_torch <= r.vs_torch_q3  # type: ignore[operator]
            assert r.vs_torch_q3 <= r.vs_torch_max  # type: ignore[operator]
        fast = r.name.startswith("fast")
        assert r.target_vs_torch == (TARGET_VS_TORCH if fast and has_torch else None)
        assert (r.vs_target is None) == (r.target_vs_torch is None)
    lines = report_lines(report)
    assert "pinned" in lines[0] and len(lines) == 3 + len(report.rows)


def test_the_bench_restores_the_thread_counts_it_pinned() -> None:
    import numba

    before = numba.get_num_threads()
    with single_thread(None) as pinned:
        assert numba.get_num_threads() == 1 and pinned == [f"numba threads 1 (was {before})"]
    assert numba.get_num_threads() == before


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
