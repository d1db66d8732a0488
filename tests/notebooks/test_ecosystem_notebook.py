"""The ecosystem notebook's smoke run: one per-token row checked (or absent), the ONNX rows too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, run_notebook
from fp8lab.studies.ecosystem import library_version, smoke_rows
from fp8lab.studies.ecosystem_onnx import runtime_version

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def test_ecosystem_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "ecosystem.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    (row,) = json.loads((run / "tables" / "ecosystem.json").read_text())
    (first,) = smoke_rows()
    assert (row["kernel"], row["own_rule"], row["spec_rule"]) == (
        first.kernel,
        first.own_rule,
        first.spec_rule,
    )
    assert row["amax_examined"] == 1 << 16
    if library_version(first.library) is None:
        assert row["status"] == "absent"
    else:
        assert row["status"] == "checked"
        assert (row["own_status"], row["spec_status"]) == ("PASS", "FAIL")
        assert row["own_mismatches"] == 0 < row["spec_mismatches"]
    (gemm,) = json.loads((run / "tables" / "gemm.json").read_text())
    if gemm["version"] == "absent":
        assert gemm["status"] == "absent" and gemm["own_status"] is None
    else:  # onnxruntime's Cast -> MatMul: its own declaration passes, sequential/folded fails
        assert gemm["status"] == "checked" and gemm["host_library"] == "onnxruntime"
        assert (gemm["own_status"], gemm["spec_status"]) == ("PASS", "FAIL")
    static = json.loads((run / "tables" / "onnx_static.json").read_text())
    casts = json.loads((run / "tables" / "onnx_casts.json").read_text())
    assert len(static) == 2 and len(casts) == 8  # two runtimes; two formats, two saturate
    for r in static + casts:
        present = runtime_version(r["runtime"]) is not None
        assert (r["status"] == "absent") != present
    assert all(r["examined"] == 1 << 16 for r in casts if r["status"] != "absent")
