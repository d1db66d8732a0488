"""The detect check scales are distinct, and the proof plan proves the array twin."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from fp8lab.detect import distinct_scales
from fp8lab.evidence.proofs import PROOF_PLAN

ROOT = Path(__file__).resolve().parents[2]


def _check_scales() -> list[float]:
    nb = json.loads((ROOT / "notebooks" / "divide_vs_reciprocal.ipynb").read_text())
    (cell,) = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    (line,) = [s for s in "".join(cell["source"]).splitlines() if s.startswith("check_scales")]
    value: list[float] = ast.literal_eval(line.split("=", 1)[1].split("#")[0].strip())
    return value


def test_notebook_check_scales_are_distinct_in_float32() -> None:
    scales = _check_scales()
    assert np.unique(np.array(scales, np.float32)).size == len(scales)
    assert distinct_scales(scales).size == len(scales)


def test_distinct_scales_refuses_two_scales_that_are_one_float32() -> None:
    with pytest.raises(ValueError, match=r"807403\.5"):
        distinct_scales([0.13, 807403.5, 807403.52])


def test_proof_plan_proves_the_array_twin_on_all_inputs() -> None:
    assert any("array" in (p.a, p.b) and "fast" not in (p.a, p.b) for p in PROOF_PLAN)
