"""Recipes as data, and every production-style port passes GF against its recipe."""

from __future__ import annotations

import pytest

from fp8lab.gates import GateStatus
from fp8lab.gates.gf import run_gf
from fp8lab.kernels.chain import PORTS
from fp8lab.specs.chain_catalogue import RECIPES, STANDALONE, standalone_for
from fp8lab.specs.chain_recipe import CHAINS, EXP_VARIANTS, OPS, RSQRT_VARIANTS

FAST = [n for n in RECIPES if "fast-exp" not in n]


def test_every_step_is_declared_from_the_closed_vocabulary() -> None:
    for recipe in RECIPES.values():
        assert recipe.chain in CHAINS and recipe.source
        assert recipe.ops()[-1] == "quant", recipe.name
        for step in recipe.steps:
            assert step.op in OPS and step.source, (recipe.name, step)
            assert step.rounds[:1] == ("f32",) and set(step.rounds) <= {"f32", "bf16"}
            assert step.output == ("e4m3fn" if step.op == "quant" else step.rounds[-1])
            if step.op == "square_reduce":
                assert step.order == "sequential"
            if step.op == "rsqrt":
                assert step.variant in RSQRT_VARIANTS
            if step.op in ("silu", "gate_silu"):
                assert step.variant in EXP_VARIANTS
            if step.op == "quant":
                assert step.nan_code in (0x7E, 0x7F)


def test_every_recipe_has_a_port_and_a_standalone_sequence() -> None:
    assert set(PORTS) == set(RECIPES)
    for name, recipe in RECIPES.items():
        assert PORTS[name].chain == recipe.chain
        assert RECIPES[standalone_for(name)].chain == recipe.chain
    assert set(STANDALONE) == set(CHAINS)


def test_the_open_vllm_divergences_are_declared() -> None:
    cuda = RECIPES["vllm-cuda-fused-add-rmsnorm-static-fp8"]
    native = RECIPES["vllm-native-rmsnorm-fp8"]
    f32w = RECIPES["vllm-native-rmsnorm-f32-weight-fp8"]
    # vLLM issue #52104: the CUDA kernel rounds the residual sum to bf16 before the variance
    assert cuda.step("add_residual").rounds == ("f32", "bf16")  # type: ignore[union-attr]
    assert native.step("add_residual").rounds == ("f32",)  # type: ignore[union-attr]
    # vLLM issue #49616: round x*r to bf16 before the weight, or keep it in float32
    assert native.step("normalize").rounds == ("f32", "bf16")  # type: ignore[union-attr]
    assert f32w.step("normalize").rounds == ("f32",)  # type: ignore[union-attr]


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST)
def test_each_port_passes_gf_against_its_recipe(name: str) -> None:
    port = PORTS[name]
    result = run_gf(port, chain=port.chain, recipe=name)
    assert result.status is GateStatus.PASS, result.reason
    assert result.mismatches == 0 and result.words > 0
    assert result.measured["prefix_steps_checked"]


@pytest.mark.slow
def test_the_fast_exp_port_passes_gf() -> None:
    port = PORTS["fast-exp-silu-mul-fp8"]
    assert run_gf(port, chain="silu-mul", recipe=port.name).status is GateStatus.PASS
