"""The GEMM notebook's smoke run completes and files the tables it asserts on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, run_notebook
from fp8lab.evidence.sidecar import from_hex_floats

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def table(run: Path, name: str) -> list[dict[str, Any]]:
    return json.loads((run / "tables" / f"{name}.json").read_text())


def test_gemm_pipeline_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "gemm_pipeline.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["params"]["smoke"] is True
    kernels = {r["kernel"]: r for r in table(run, "g3_kernels")}
    assert kernels["vllm_cpp"]["status"] == "PASS"
    assert kernels["vllm_cpp"]["words"] == 64 + 128 + 384 + 48 + 240  # + NaN-propagation case
    assert kernels["upstream_cuda_bf16"]["status"] == "FAIL"
    cases = table(run, "g3_cases")
    assert len(cases) == 4
    assert all(0 < from_hex_floats(c["worst_ratio_tight"]) <= 1 for c in cases)
    ratios = {r["model"]: from_hex_floats(r["max_ratio"]) for r in table(run, "error_ratios")}
    assert ratios["sequential"] <= 1 and ratios["fast_accum_e8m13_trunc_128"] > 1
    epilogue = {r["out"]: r for r in table(run, "epilogue_deviation")}
    assert epilogue["f32"]["differing"] > 0
    assert len(list((run / "figures").glob("*.svg"))) == 4
