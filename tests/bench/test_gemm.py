"""The GEMM benchmark runs and reports ratios (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.bench.gemm import run_gemm_bench_pinned
from fp8lab.cli.main import main

pytestmark = pytest.mark.process


def test_pinned_bench_reports_every_path() -> None:
    rows = run_gemm_bench_pinned(16, 16, 32, repeats=1)
    names = [r.name for r in rows]
    assert "exact reference (codes in)" in names and "sequential f32 model" in names
    assert all(r.baseline in names for r in rows)  # timings are reported, never asserted


def test_cli_gemm_bench(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    argv = ["gemm-bench", "--m", "8", "--n", "16", "--k", "32", "--repeats", "1"]
    assert main([*argv, "--threads", "--no-kernel", "--json", str(path)]) == 0
    assert json.loads(path.read_text())["k"] == 32
