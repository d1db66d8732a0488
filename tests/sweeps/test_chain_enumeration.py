"""The silu-mul enumeration against brute ``reference_chain`` evaluation.

Rows of gates are checked for all 65,536 ``u`` against the reference on a
seeded subset (NaN, inf, zero, subnormal and the fast-exp gates included);
the full 2**32 driver and its coverage proof run on planted silu tables (the
real tables take minutes), where the expected answer is known.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.specs.chain_catalogue import RECIPES
from fp8lab.sweeps import chain_enumeration as en
from tests.sweeps.chain_enum_helpers import (
    CPP,
    CUDA,
    EXPF,
    FAST,
    GATES,
    brute,
    mismatches,
    plant_tables,
)


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
    assert mismatches(a, b, scale) == 0
    if RECIPES[a].steps[1].rounds == RECIPES[b].steps[1].rounds:
        assert shortcut_spy[0] > 0 and shortcut_spy[1] > 0  # both branches were checked


def test_the_checked_rows_hold_differences_of_each_kind() -> None:
    diff, codes_a, codes_b, classes = en.silu_mul_row_differences(CPP, CUDA, 0.0625, GATES)
    assert diff.any(axis=1).sum() > len(GATES) // 2
    kinds = np.bincount(classes[diff], minlength=len(en.CLASSES))
    assert kinds[[en.CLASSES.index(k) for k in ("finite", "nan", "nan-code")]].all()
    # Exactly one side NaN: inf times a silu that the CUDA recipe's bf16 store flushed to 0.
    r, u = np.nonzero(diff & (classes == en.CLASSES.index("nan")))
    assert [
        (int(GATES[i]), int(j), int(codes_a[i, j]), int(codes_b[i, j]))
        for i, j in zip(r, u, strict=True)
    ] == [
        (0x0001, 0xFF80, 0xFE, 0x7E),
        (0x8001, 0x7F80, 0xFE, 0x7E),
    ]
    diff, _, _, _ = en.silu_mul_row_differences(EXPF, FAST, 0.0625, GATES)
    # The fast exp moves the silu of the fast-exp gates here, but a byte only in
    # row 0xC1B9 (u = +-0x48B9): the two pairs `fp8lab chains --enumerate` finds at 1/16.
    assert [(int(GATES[r]), int(u)) for r, u in zip(*np.nonzero(diff), strict=True)] == [
        (0xC1B9, 0x48B9),
        (0xC1B9, 0xC8B9),
    ]


def test_a_recipe_against_itself_is_zero_rowwise() -> None:
    for recipe in (CPP, FAST):
        diff, codes_a, codes_b, _ = en.silu_mul_row_differences(recipe, recipe, 1.0, GATES)
        assert not diff.any() and np.array_equal(codes_a, codes_b)
        assert np.array_equal(codes_a, brute(recipe, 1.0)[0])


@pytest.fixture
def planted_tables(monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    return plant_tables(monkeypatch)


def test_the_full_enumeration_adds_up_its_rows(planted_tables: dict[str, np.ndarray]) -> None:
    gates = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    moved = gates[planted_tables[EXPF].view(np.uint32) != planted_tables[FAST].view(np.uint32)]
    diff, codes_a, codes_b, _ = en.silu_mul_row_differences(EXPF, FAST, 0.5, moved)
    result = en.enumerate_silu_mul(EXPF, FAST, 0.5, first=3)
    assert result.examined == 1 << 32 and result.covered == [["0x00000000", "0x100000000"]]
    assert (result.full_rows, result.shortcut_rows) == (5, (1 << 16) - 5)
    assert result.differ == int(diff.sum()) > 0
    up = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.multiply(planted_tables[EXPF][moved][:, None], up, dtype=np.float32)
        q = np.multiply(planted_tables[FAST][moved][:, None], up, dtype=np.float32)
        ya, yb = (p * np.float32(2))[diff], (q * np.float32(2))[diff]  # fl32(1/0.5) = 2
        nan = np.isnan(ya) | np.isnan(yb)
        sat = ~nan & ((np.abs(ya) > 448) | (np.abs(yb) > 448))
    expected = {"finite": int((~nan & ~sat).sum()), "saturated": int(sat.sum())}
    expected |= {"nan": 0, "nan-code": 0}
    assert result.classes == expected and expected["finite"] and expected["saturated"]
    cls = np.zeros(diff.shape, np.int8)
    cls[diff] = np.where(sat, 1, 0)
    want = []
    for c, name in enumerate(en.CLASSES):
        r, u = np.nonzero(diff & (cls == c))
        want += [
            (
                f"{moved[i]:#06x}",
                f"{j:#06x}",
                f"{codes_a[i, j]:#04x}",
                f"{codes_b[i, j]:#04x}",
                name,
            )
            for i, j in zip(r[:3], u[:3], strict=True)
        ]
    assert [(f["g"], f["u"], f["a"], f["b"], f["class"]) for f in result.first] == want


def test_a_recipe_against_itself_is_zero_over_all_pairs(
    planted_tables: dict[str, np.ndarray],
) -> None:
    result = en.enumerate_silu_mul(FAST, FAST, 1.0)
    assert (result.examined, result.differ, result.first) == (1 << 32, 0, [])


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
