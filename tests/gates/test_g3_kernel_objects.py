"""Test the testers: G3 takes any MatmulKernel object, checks the model it declares, names outputs.

A kernel object declares the model it claims in ``spec`` (any accumulation in
``fp8lab.kernels.matmul_models.MODELS``, either epilogue). G3 checks that model and says which
one in its reason; a spec it cannot read is a FAIL with the reason, never a
silent fall back to the default model. Offenders name the output ``out[i,j]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from fp8lab.gates import GateStatus, run_g3
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_model import decode_operands
from fp8lab.kernels.matmul_protocol import MatmulKernel, MatmulSpec, validate_matmul_args
from fp8lab.populations.gemm import SEED_CASES


def _tree_sum(a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """Neighbours added level by level in float32; an odd last term moves up."""
    a, b = decode_operands(a_codes, b_codes)
    t = a[:, None, :] * b[None, :, :]
    while t.shape[-1] > 1:
        half = t.shape[-1] // 2
        t = np.concatenate(
            [t[..., 0 : 2 * half : 2] + t[..., 1 : 2 * half : 2], t[..., 2 * half :]], -1
        )
    return t[..., 0]


@dataclass(frozen=True)
class PairwiseKernel:
    """A protocol object (not a function) that sums pairwise and declares ``spec``."""

    name: str
    spec: Any

    def matmul(self, a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        a, b, si, sw, o = validate_matmul_args(a, b, s_in, s_w, out)
        return apply_epilogue(_tree_sum(a, b), si, sw, o, MatmulSpec())


def test_a_protocol_object_is_checked_against_the_model_it_declares() -> None:
    kernel = PairwiseKernel("pairwise", MatmulSpec(accumulation="pairwise"))
    assert isinstance(kernel, MatmulKernel)
    result = run_g3(kernel)
    assert result.status is GateStatus.PASS, result.reason
    assert "pairwise" in result.reason
    claims_sequential = run_g3(PairwiseKernel("pairwise", MatmulSpec()))
    assert claims_sequential.status is GateStatus.FAIL
    assert claims_sequential.mismatches_by_class["bitwise"] > 0
    assert "sequential" in claims_sequential.reason


def test_a_spec_of_another_type_is_read_not_silently_replaced() -> None:
    spec = SimpleNamespace(accumulation="pairwise", epilogue="folded", bf16_epilogue=False)
    result = run_g3(PairwiseKernel("duck", spec))
    assert result.status is GateStatus.PASS, result.reason


def test_a_spec_naming_no_known_model_is_a_fail_with_the_reason() -> None:
    for spec in (MatmulSpec(accumulation="kahan"), MatmulSpec(epilogue="three"), object()):
        result = run_g3(PairwiseKernel("unknown", spec), cases=SEED_CASES[:1])
        assert result.status is GateStatus.FAIL
        assert "spec" in result.reason and "sequential" in result.reason, result.reason


def test_offenders_name_the_output_position() -> None:
    result = run_g3(PairwiseKernel("pairwise", MatmulSpec()), cases=SEED_CASES[:2])
    bitwise = [o for o in result.first_offenders if o.word_class == "bitwise"]
    assert bitwise
    for o in bitwise:
        n = 64 if o.case.startswith("1x64") else 32
        assert o.input_hex == f"out[{o.index // n},{o.index % n}]"
