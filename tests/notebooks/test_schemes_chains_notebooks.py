"""The quant_schemes and fused_chains notebooks' smoke runs complete and file their tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, run_notebook

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def tables(run: Path, name: str) -> list[dict[str, object]]:
    return json.loads((run / "tables" / f"{name}.json").read_text())


def test_quant_schemes_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "quant_schemes.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    assert all(r["status"] == "PASS" for r in tables(run, "gq_ports"))
    sweeps = tables(run, "amax_sweeps")
    assert len(sweeps) == 9 and all(r["examined"] == 1 << 26 for r in sweeps)  # 3 nvfp4 pairs x 2
    assert {p.name for p in (run / "figures").glob("*.svg")} == {
        "floor_vs_rceil.svg",
        "scheme_errors.svg",
    }


def test_fused_chains_smoke_run(tmp_path: Path) -> None:
    done = run_notebook(NOTEBOOKS_DIR / "fused_chains.ipynb", tmp_path, {"smoke": True})
    run = done.directory
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    issues = {r["issue"]: r["bytes_differ"] for r in tables(run, "open_issues")}
    assert issues == {"vllm#52104": 910, "vllm#49616": 988}
    assert (run / "figures" / "rounding_cost.svg").is_file()
