"""The accumulation-order notebook's smoke run completes and files its tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, run_notebook

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def test_accumulation_order_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "accumulation_order.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    rows = json.loads((run / "tables" / "numpy_orders.json").read_text())
    assert rows and all(r["verdict"] in ("reproduced", "not-fixed") for r in rows)
    assert all(r["outputs_reproduced"] == r["outputs_checked"] > 0 for r in rows)
    assert all(r["cpu"] and r["blas"] and r["threads"] >= 1 for r in rows)
    models = json.loads((run / "tables" / "model_orders.json").read_text())
    assert {r["family"] for r in models if r["target"] == "fused_32_e8m13"} >= {"fused(n=32)"}
