from __future__ import annotations

import numpy as np

from fp8lab.bench import BASELINE, bench_input, run_bench


def test_bench_reports_every_encoder_against_the_baseline() -> None:
    rows = run_bench(n=1 << 12, repeats=1, include_slow=False)
    names = [r.name for r in rows]
    assert BASELINE in names and any("numba" in n for n in names)
    base = next(r for r in rows if r.name == BASELINE)
    assert base.vs_ml_dtypes_clip == 1.0
    assert all(r.melem_per_s > 0 for r in rows)


def test_bench_input_is_seeded() -> None:
    a, b = bench_input(1000, 7), bench_input(1000, 7)
    assert np.array_equal(a, b, equal_nan=True)
    assert np.isnan(a).any() or np.isinf(a).any() or (a == 0).any()
