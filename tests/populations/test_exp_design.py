"""The designed fast-exp splits: the search reproduces its table, the references confirm it."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from fp8lab.populations.exp_design import (
    FAST_EXP_BF16_SPLITS,
    FAST_EXP_SPLITS,
    search_fast_exp_bf16_splits,
    search_fast_exp_splits,
)
from fp8lab.refs.chain_ref import reference_chain
from fp8lab.specs.chain_catalogue import RECIPES


@pytest.mark.slow
def test_the_tables_are_the_searches_output() -> None:
    assert search_fast_exp_splits() == FAST_EXP_SPLITS
    assert search_fast_exp_bf16_splits() == FAST_EXP_BF16_SPLITS


def test_the_exact_references_split_every_designed_pair() -> None:
    expf, fast = RECIPES["expf-silu-mul-fp8"], RECIPES["fast-exp-silu-mul-fp8"]
    for scale_hex, pairs in FAST_EXP_SPLITS:
        bits = np.array(pairs, np.uint16)
        x = np.concatenate([bits[:, 0], bits[:, 1]]).view(ml_dtypes.bfloat16)[None, :]
        inputs = {"x_gate_up": x, "scale": float.fromhex(scale_hex)}
        a = reference_chain(expf, inputs)["quant"]
        b = reference_chain(fast, inputs)["quant"]
        assert int((a != b).sum()) == len(pairs), scale_hex


def test_behind_a_bf16_store_the_references_split_every_designed_pair() -> None:
    cpp = RECIPES["vllm-cpp-standalone-silu-mul-fp8"]
    fast_steps = tuple(
        dataclasses.replace(s, variant="exp2-f32-product") if s.op == "silu" else s
        for s in cpp.steps
    )
    fast = dataclasses.replace(cpp, steps=fast_steps)
    for scale_hex, pairs in FAST_EXP_BF16_SPLITS:
        bits = np.array(pairs, np.uint16)
        x = np.concatenate([bits[:, 0], bits[:, 1]]).view(ml_dtypes.bfloat16)[None, :]
        inputs = {"x_gate_up": x, "scale": float.fromhex(scale_hex)}
        a = reference_chain(cpp, inputs)["quant"]
        b = reference_chain(fast, inputs)["quant"]
        assert int((a != b).sum()) == len(pairs), scale_hex
