"""The silu-mul enumeration goes red when its shortcut or its coverage is wrong.

A shortcut that deems every gate's silu values identical, or a classifier
that calls every difference finite, must disagree with brute
``reference_chain`` evaluation; a missing or repeated batch of gate rows
must fail the coverage proof instead of giving a count.
"""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.sweeps import chain_enumeration as en
from fp8lab.sweeps.coverage import CoverageError
from tests.sweeps.chain_enum_helpers import CPP, CUDA, EXPF, FAST, mismatches, plant_tables


def test_a_wrong_shortcut_makes_the_cross_check_go_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(en, "SAME_SILU", lambda sa, sb: np.ones(len(sa), np.bool_))
    assert mismatches(CPP, CUDA, 0.0625) > 0


def test_a_wrong_classification_makes_the_cross_check_go_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(en, "_classify", lambda ya, yb: np.zeros(ya.shape, np.uint8))
    assert mismatches(CPP, CUDA, 0.0625) > 0


def test_the_cross_check_is_green_without_the_plant() -> None:
    assert mismatches(CPP, CUDA, 0.0625) == 0


@pytest.mark.parametrize("defect", ["missing", "twice"])
def test_the_coverage_proof_fails_on_a_missing_or_repeated_piece(
    monkeypatch: pytest.MonkeyPatch, defect: str
) -> None:
    plant_tables(monkeypatch)

    def blocks(size: int) -> list[np.ndarray]:
        parts = en._gate_blocks(size)
        return parts[:-1] if defect == "missing" else [*parts, parts[7]]

    with pytest.raises(CoverageError):
        en.enumerate_silu_mul(EXPF, FAST, 1.0, blocks=blocks)
