"""The triton_interpreter notebook's smoke run: replaced conversions PASS, the stock one FAILs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, run_notebook
from fp8lab.evidence.headline import proof_records

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def test_triton_interpreter_smoke_run(tmp_path: Path) -> None:
    pytest.importorskip("triton", reason="triton is not installed (optional: the triton extra)")
    done = run_notebook(NOTEBOOKS_DIR / "triton_interpreter.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    records = json.loads((run / "tables" / "exhaustive.json").read_text())
    assert [r["status"] for r in records] == ["PASS", "PASS", "FAIL"]
    assert all(r["examined"] == 1 << 24 for r in records)
    assert records[2]["mismatches"] > 0 == records[0]["mismatches"] + records[1]["mismatches"]
    shown = [(p["status"], p.get("expected_status")) for p in proof_records(run)]
    assert shown == [("PASS", None), ("PASS", None), ("FAIL", "FAIL")]  # the smoke range has no NaN
