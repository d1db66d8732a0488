"""The amax sweep's per-pattern verdicts against the exact references, on boundary samples."""

from __future__ import annotations

import decimal
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.populations.schemes import NVFP4_FUSED_SPLIT_AMAX_BITS, NVFP4_SPLIT_AMAX_BITS
from fp8lab.refs.float32_exact import from_bits, round_f32
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_scheme_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES
from fp8lab.sweeps.amax import NVFP4_PAIRS, PAIRS, main, sweep_pair
from fp8lab.sweeps.range_run import RangeRun

_CTX = decimal.Context(prec=60)


def _samples(seed: int) -> list[int]:
    """Patterns on, and within 3 ulps of, 2**k and 448 * 2**k and 6 * 2**k, plus seeded ones."""
    rng = np.random.default_rng(seed)
    anchors = []
    for k in range(-149, 128, 7):
        for base in (1.0, 448.0, 6.0, 1.75):
            v = base * 2.0**k
            if 0 < v < 3.4e38:
                p = int(np.array([v], np.float32).view(np.uint32)[0])
                anchors += [p + d for d in range(-3, 4) if 0 <= p + d < 0x7F80_0000]
    anchors += rng.integers(0, 0x7F80_0000, 300).tolist()
    return [*sorted(set(anchors)), 0, 0x7F80_0000, 0x7FC0_0000]


def _rn_log2(v: float) -> float:
    """Correctly rounded float32 log2 of a positive float32 (60-digit decimal, then exact RNE)."""
    exact = _CTX.divide(_CTX.ln(decimal.Decimal(v)), _CTX.ln(decimal.Decimal(2)))
    return round_f32(abs(Fraction(exact)), exact < 0)


def _splits(pair: str, p: int, s_enc: float = 1.0) -> bool:
    return sweep_pair(pair, run=RangeRun(start=p, stop=p + 1), s_enc=s_enc).differ == 1


def _reference_splits(pair: str, p: int, global_amax: float = 2688.0) -> bool:
    amax = from_bits(p)
    if pair == "floor-vs-rceil":
        block = np.zeros((1, 32), np.float32)
        block[0, 0] = amax
        floor = reference_scheme_quant(block, RULES["ocp-floor"])[1]
        rceil = reference_scheme_quant(block, RULES["rceil"])[1]
        return bool(floor[0, 0] != rceil[0, 0])
    if pair == "log2-vs-bits-ceil":
        s = float(np.float32(amax) / np.float32(448.0))
        s = s if s >= float(np.float32(1e-10)) else float(np.float32(1e-10))
        if not math.isfinite(s):
            return False
        k = Fraction(s).numerator.bit_length() - Fraction(s).denominator.bit_length()
        bits_ceil = k if Fraction(2) ** k >= Fraction(s) else k + 1
        bits_ceil = k - 1 if Fraction(2) ** (k - 1) >= Fraction(s) else bits_ceil
        return math.ceil(_rn_log2(s)) != bits_ceil
    if pair == "log2-vs-bits-floor":
        if not math.isfinite(amax) or amax < 2.0**-126:
            return False
        bits_floor = ((p >> 23) & 0xFF) - 127
        clip = lambda e: min(max(e - 8, -127), 128)  # noqa: E731
        return clip(math.floor(_rn_log2(amax))) != clip(bits_floor)
    arr = np.array([amax], np.float32)
    first, second = pair.removeprefix("nvfp4-").split("-vs-")
    a = reference_nvfp4_block_scales(arr, global_amax, NVFP4_RULES[f"te-nvfp4-{first}"])
    b = reference_nvfp4_block_scales(arr, global_amax, NVFP4_RULES[f"te-nvfp4-{second}"])
    return bool(a[0] != b[0])


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_sweep_verdicts_match_the_exact_reference(pair: str) -> None:
    samples = _samples(1)
    # at S_enc = 1 divide and fused split on 15 finite patterns only (README); add three
    samples += list(NVFP4_SPLIT_AMAX_BITS[:3]) if pair in NVFP4_PAIRS else []
    splits = 0
    for p in samples:
        ours = _splits(pair, p)
        assert ours == _reference_splits(pair, p), f"{pair} at {p:#010x}"
        splits += ours
    assert len(samples) > 500
    if pair != "log2-vs-bits-floor":  # its splits sit at the top of a binade (see below)
        assert splits > 0


@pytest.mark.parametrize("pair", NVFP4_PAIRS)
def test_nvfp4_verdicts_match_the_exact_reference_at_s_enc_2688(pair: str) -> None:
    """Global amax 1.0: S_enc = 2688, where reciprocal and fused are two expressions."""
    samples = _samples(2)[::3]  # a third of them: the S_enc = 1 test above takes them all
    split_amax = list(NVFP4_FUSED_SPLIT_AMAX_BITS[2688.0][:6])  # reciprocal and fused split
    splits = 0
    for p in [*samples, *split_amax]:
        ours = _splits(pair, p, 2688.0)
        assert ours == _reference_splits(pair, p, 1.0), f"{pair} at {p:#010x}"
        splits += ours
    assert splits > 0


def test_log2_floor_split_is_found_at_the_top_of_a_binade() -> None:
    result = sweep_pair("log2-vs-bits-floor", run=RangeRun(start=0x7F00_0000, stop=0x7F80_0000))
    assert result.differ > 0
    assert _reference_splits("log2-vs-bits-floor", result.first_differ)
    assert not _reference_splits("log2-vs-bits-floor", result.first_differ - 1)


def test_sweep_counts_what_it_examined_and_refuses_bad_ranges() -> None:
    result = sweep_pair("floor-vs-rceil", run=RangeRun(start=0x3F80_0000, stop=0x4000_0000))
    assert result.examined == 1 << 23
    assert result.differ == 0x20_0000 - 1  # amax in (1.75, 2): RCEIL 2**-7, FLOOR 2**-8
    with pytest.raises(ValueError, match="outside 2\\*\\*31"):
        sweep_pair("floor-vs-rceil", run=RangeRun(start=5, stop=5))
    with pytest.raises(ValueError, match="unknown pair"):
        sweep_pair("floor-vs-even")


def test_main_refuses_an_unknown_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["floor-vs-even"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


PUBLISHED = {  # README "Exhaustive amax sweeps": (pair, S_enc) -> (differ, of which NaN amax)
    ("floor-vs-rceil", 1.0): (517_996_296, 0),
    ("log2-vs-bits-ceil", 1.0): (3_212, 0),
    ("log2-vs-bits-floor", 1.0): (7_096, 0),
    ("nvfp4-divide-vs-reciprocal", 1.0): (8_388_622, 8_388_607),
    ("nvfp4-divide-vs-reciprocal", 2688.0): (8_388_626, 8_388_607),
    ("nvfp4-divide-vs-fused", 1.0): (15, 0),
    ("nvfp4-divide-vs-fused", 2688.0): (46, 0),
    ("nvfp4-reciprocal-vs-fused", 1.0): (8_388_607, 8_388_607),
    ("nvfp4-reciprocal-vs-fused", 2688.0): (8_388_638, 8_388_607),
}


RESULTS = Path(__file__).resolve().parents[2] / "results" / "quant_schemes"


def published_sweeps() -> list[dict[str, Any]]:
    """The amax sweeps of the newest complete ``quant_schemes`` run (``make evidence``)."""
    runs = [json.loads((d / "manifest.json").read_text()) | {"dir": d} for d in RESULTS.iterdir()]
    complete = sorted((m for m in runs if m["status"] == "complete"), key=lambda m: m["started"])
    assert complete, "no published quant_schemes run"
    rows: list[dict[str, Any]] = json.loads(
        (complete[-1]["dir"] / "tables" / "amax_sweeps.json").read_text()
    )
    return rows


def sweep_problems(rows: list[dict[str, Any]]) -> list[str]:
    """How a run's amax sweeps fall short of :data:`PUBLISHED` over all 2**31 patterns."""
    found: dict[tuple[str, float], dict[str, Any]] = {}
    for row in rows:
        s_enc = float.fromhex(row["s_enc"]) if row["s_enc"] is not None else 1.0
        found[(row["pair"], s_enc)] = row
    problems = [f"{key}: no row" for key in sorted(PUBLISHED) if key not in found]
    problems += [f"{key}: a row no count is published for" for key in found if key not in PUBLISHED]
    for key, row in sorted(found.items()):
        if key not in PUBLISHED:
            continue
        if (row["start"], row["stop"], row["examined"]) != (0, 1 << 31, 1 << 31):
            problems.append(f"{key}: swept [{row['start']:#x}, {row['stop']:#x}), not all 2**31")
        if (row["differ"], row["differ_nan_amax"]) != PUBLISHED[key]:
            problems.append(f"{key}: {row['differ']}, {row['differ_nan_amax']} NaN")
    return problems


def test_the_published_run_swept_all_2_31_patterns_and_found_the_table() -> None:
    # the sweeps themselves run in make evidence (quant_schemes, full_sweeps=True by default);
    # windows of them run above and in the notebook's smoke run
    assert sweep_problems(published_sweeps()) == []


def test_a_changed_count_a_window_or_a_missing_row_is_named() -> None:
    rows = published_sweeps()
    assert sweep_problems([]) == [f"{key}: no row" for key in sorted(PUBLISHED)]
    floor_rceil = next(r for r in rows if r["pair"] == "floor-vs-rceil")
    planted = [
        {**floor_rceil, "differ": floor_rceil["differ"] - 1},
        {**floor_rceil, "start": 0x3C00_0000, "stop": 0x4000_0000, "examined": 1 << 26},
    ]
    for wrong in planted:
        problems = sweep_problems([wrong if r is floor_rceil else r for r in rows])
        assert len(problems) == 1 and problems[0].startswith("('floor-vs-rceil', 1.0)"), problems
