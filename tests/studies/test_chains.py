"""The fused_chains notebook's helpers: recipe tables, pairs, divergences, rounding cost."""

from __future__ import annotations

import pytest

from fp8lab.specs.chain_catalogue import RECIPES
from fp8lab.specs.chain_recipe import CHAINS
from fp8lab.studies import chains as study
from fp8lab.studies.chains import (
    ISSUE_PAIRS,
    ISSUE_PUBLISHED,
    CostRow,
    comparable_pairs,
    cost_totals,
    divergence_rows,
    recipe_rows,
    rounding_cost,
    step_rows,
)


def test_recipe_rows_and_step_rows_cover_the_catalogue() -> None:
    rows = recipe_rows()
    assert [r.recipe for r in rows] == list(RECIPES)
    assert all(r.roundings.endswith("quant[f32]") and r.nan_code in ("0x7e", "0x7f") for r in rows)
    steps = [s for chain in CHAINS for s in step_rows(chain)]
    assert len(steps) == sum(len(c.steps) for c in RECIPES.values())
    with pytest.raises(ValueError, match="unknown chain"):
        step_rows("layernorm")


def test_comparable_pairs_keep_gemma_apart_and_hold_both_issues() -> None:
    pairs = comparable_pairs()
    assert all(RECIPES[a].chain == RECIPES[b].chain for a, b in pairs)
    assert not any("gemma" in a or "gemma" in b for a, b in pairs)
    assert set(ISSUE_PAIRS.values()) <= set(pairs)
    assert len(pairs) == len(set(pairs)) == 6 + 6


def test_the_issue_divergences_are_the_published_ones() -> None:
    rows = divergence_rows(list(ISSUE_PAIRS.values()))
    wide = {
        r.issue: (r.bytes_differ, r.prequant_differ) for r in rows if r.kind == "realistic-wide"
    }
    assert wide == ISSUE_PUBLISHED
    assert all(r.command == f"fp8lab chains --diverge {r.a},{r.b}" for r in rows)


def test_a_recipe_against_itself_diverges_nowhere() -> None:
    name = "vllm-cpp-standalone-silu-mul-fp8"
    rows = divergence_rows([(name, name)])
    assert rows and all(r.bytes_differ == r.prequant_differ == 0 and r.words > 0 for r in rows)
    assert {r.issue for r in rows} == {""}


def test_rounding_cost_counts_defined_words_only() -> None:
    rows = rounding_cost("vllm-native-rmsnorm-fp8")
    kinds = {r.kind: r for r in rows}
    assert kinds["nonfinite"].words == 0 and kinds["nonfinite"].undefined > 0
    assert kinds["zero"].bytes_differ == 0 and kinds["realistic"].bytes_differ > 0
    assert all(r.words + r.undefined > 0 for r in rows)
    with pytest.raises(ValueError, match="unknown recipe"):
        rounding_cost("vllm-rmsnorm")


def test_rounding_cost_is_zero_when_the_recipe_is_the_exact_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = "vllm-cpp-standalone-rmsnorm-fp8"
    monkeypatch.setattr(
        study,
        "reference_chain",
        lambda chain, inputs: {"quant": study.exact_chain_codes(chain, inputs)[0]},
    )
    assert all(r.bytes_differ == 0 for r in rounding_cost(name))


def test_cost_totals_sum_per_recipe() -> None:
    rows = [CostRow("a", "x", 10, 1, 0), CostRow("a", "y", 5, 2, 3), CostRow("b", "x", 7, 0, 0)]
    assert cost_totals(rows) == {"a": (15, 3), "b": (7, 0)}
