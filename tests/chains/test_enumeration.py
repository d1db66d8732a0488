"""The silu-mul enumeration (issue 15 §4) against brute ``reference_chain`` evaluation.

Rows of gates are checked for all 65,536 ``u`` against the reference on a
seeded subset (NaN, inf, zero, subnormal and the fast-exp gates included);
the full 2**32 driver and its coverage proof run on planted silu tables (the
real tables take minutes), where the expected answer is known.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.chains import enumeration as en
from fp8lab.chains.catalogue import RECIPES
from fp8lab.cli.main import main
from fp8lab.coverage import CoverageError
from fp8lab.refs.chain_ref import reference_chain

CPP = "vllm-cpp-standalone-silu-mul-fp8"
CUDA = "vllm-cuda-silu-and-mul-quant-fp8"
EXPF = "expf-silu-mul-fp8"
FAST = "fast-exp-silu-mul-fp8"
SEED = 20261203
SPECIAL_G = (
    0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F,  # zeros, subnormals
    0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81,  # infinities, NaNs
    0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x4300,  # max, min, +-1, 128 (silu exact in bf16)
    0x3FDB, 0xC11D, 0xC170, 0xC1B0, 0xC216,  # gates whose silu the fast exp moves
)  # fmt: skip


def _gates() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    return np.array([*SPECIAL_G, *rng.integers(0, 1 << 16, 6)], np.uint16)


GATES = _gates()
_BRUTE: dict[tuple[str, float], np.ndarray] = {}


def _brute(recipe: str, scale: float) -> np.ndarray:
    """Every u for every gate of GATES through reference_chain: codes (rows, 65536)."""
    if (recipe, scale) not in _BRUTE:
        up = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        x = np.concatenate(
            [np.repeat(GATES[:, None], 1 << 16, axis=1), np.tile(up, (len(GATES), 1))], 1
        )
        inputs: dict[str, Any] = {"x_gate_up": x.view(ml_dtypes.bfloat16), "scale": scale}
        _BRUTE[recipe, scale] = reference_chain(RECIPES[recipe], inputs)["quant"]
    return _BRUTE[recipe, scale]


def _mismatches(a: str, b: str, scale: float) -> int:
    """(g, u) of GATES where the enumeration's rows disagree with brute evaluation."""
    diff, codes_a, codes_b = en.silu_mul_row_differences(a, b, scale, GATES)
    ref_a, ref_b = _brute(a, scale), _brute(b, scale)
    wrong = diff != (ref_a != ref_b)
    wrong |= (codes_a != ref_a) | (codes_b != ref_b)
    return int(wrong.sum())


@pytest.fixture
def shortcut_spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows the shortcut took and left (proves both branches ran)."""
    taken = [0, 0]
    real = en.SAME_SILU

    def spy(sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
        same = real(sa, sb)
        taken[0] += int(same.sum())
        taken[1] += int((~same).sum())
        return same

    monkeypatch.setattr(en, "SAME_SILU", spy)
    return taken


@pytest.mark.parametrize(
    ("a", "b", "scale"),
    [(CPP, CUDA, 0.0625), (CPP, CUDA, 1.0), (EXPF, FAST, 0.0625), (FAST, CUDA, 0.0625)],
)
def test_rows_equal_brute_reference_evaluation(
    a: str, b: str, scale: float, shortcut_spy: list[int]
) -> None:
    assert _mismatches(a, b, scale) == 0
    if RECIPES[a].steps[1].rounds == RECIPES[b].steps[1].rounds:
        assert shortcut_spy[0] > 0 and shortcut_spy[1] > 0  # both branches were checked


def test_the_checked_rows_hold_differences_of_every_class() -> None:
    diff, _, _ = en.silu_mul_row_differences(CPP, CUDA, 0.0625, GATES)
    assert diff.any(axis=1).sum() > len(GATES) // 2
    diff, _, _ = en.silu_mul_row_differences(EXPF, FAST, 0.0625, GATES)
    assert diff.sum() == 0  # the fast exp moves silu values here but no byte at 1/16


def test_a_wrong_shortcut_makes_the_cross_check_go_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(en, "SAME_SILU", lambda sa, sb: np.ones(len(sa), np.bool_))
    assert _mismatches(CPP, CUDA, 0.0625) > 0


def test_a_recipe_against_itself_is_zero_rowwise() -> None:
    for recipe in (CPP, FAST):
        diff, codes_a, codes_b = en.silu_mul_row_differences(recipe, recipe, 1.0, GATES)
        assert not diff.any() and np.array_equal(codes_a, codes_b)
        assert np.array_equal(codes_a, _brute(recipe, 1.0))


@pytest.fixture
def planted_tables(monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    """Silu tables planted for EXPF and FAST: equal except on five gates (10% apart)."""
    rng = np.random.default_rng(SEED)
    base = (rng.standard_normal(1 << 16) * 4).astype(np.float32)
    moved = base.copy()
    rows = np.array([3, 700, 0x3FDB, 0x9000, 0xFFF0])
    moved[rows] *= np.float32(1.1)
    tables = {EXPF: base, FAST: moved}
    for name, table in tables.items():
        monkeypatch.setitem(en._SILU_TABLES, en._silu_key(RECIPES[name].steps[0]), table)
    return tables


def test_the_full_enumeration_adds_up_its_rows(planted_tables: dict[str, np.ndarray]) -> None:
    gates = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    moved = gates[planted_tables[EXPF].view(np.uint32) != planted_tables[FAST].view(np.uint32)]
    diff, codes_a, codes_b = en.silu_mul_row_differences(EXPF, FAST, 0.5, moved)
    result = en.enumerate_silu_mul(EXPF, FAST, 0.5, first=3)
    assert result.examined == 1 << 32 and result.covered == [["0x00000000", "0x100000000"]]
    assert (result.full_rows, result.shortcut_rows) == (5, (1 << 16) - 5)
    assert result.differ == int(diff.sum()) > 0
    assert sum(result.classes.values()) == result.differ
    r, u = np.nonzero(diff)
    assert [(f["g"], f["u"], f["a"], f["b"]) for f in result.first] == [
        (f"{moved[i]:#06x}", f"{j:#06x}", f"{codes_a[i, j]:#04x}", f"{codes_b[i, j]:#04x}")
        for i, j in zip(r[:3], u[:3], strict=True)
    ]


def test_a_recipe_against_itself_is_zero_over_all_pairs(
    planted_tables: dict[str, np.ndarray],
) -> None:
    result = en.enumerate_silu_mul(FAST, FAST, 1.0)
    assert (result.examined, result.differ, result.first) == (1 << 32, 0, [])


@pytest.mark.parametrize("defect", ["missing", "twice"])
def test_the_coverage_proof_fails_on_a_missing_or_repeated_piece(
    planted_tables: dict[str, np.ndarray], defect: str
) -> None:
    def blocks(size: int) -> list[np.ndarray]:
        parts = en._gate_blocks(size)
        return parts[:-1] if defect == "missing" else [*parts, parts[7]]

    with pytest.raises(CoverageError):
        en.enumerate_silu_mul(EXPF, FAST, 1.0, blocks=blocks)


def test_chains_enumerate_prints_and_writes_the_count(
    planted_tables: dict[str, np.ndarray], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "e.json"
    argv = ["chains", "--enumerate", f"{EXPF},{FAST}", "--scale", "0.5", "--json", str(path)]
    assert main(argv) == 0
    data = json.loads(path.read_text())
    assert data["examined"] == 1 << 32 and data["a"] == EXPF and data["scale"] == 0.5
    assert data["differ"] == sum(data["classes"].values()) > 0
    assert "fp8 bytes differ" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["--enumerate", CPP],
        ["--enumerate", f"{CPP},nope"],
        ["--enumerate", f"{CPP},vllm-native-rmsnorm-fp8"],
        ["--enumerate", "vllm-native-rmsnorm-fp8,vllm-native-rmsnorm-fp8"],
        ["--enumerate", f"{CPP},{CUDA}", "--scale", "0"],
        ["--enumerate", f"{CPP},{CUDA}", "--scale", "nan"],
        ["--enumerate", f"{CPP},{CUDA}", "--scale", "1e-60"],
        ["--scale", "1"],
        ["--enumerate", f"{CPP},{CUDA}", "--diverge", f"{CPP},{CUDA}"],
    ],
)
def test_chains_enumerate_bad_input_is_one_usage_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chains", *argv]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err
    assert captured.out == ""
