from __future__ import annotations

import json

import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.gates import (
    G1_SCALES,
    GateResult,
    GateStatus,
    exit_code,
    run_g1,
    run_g2,
)
from fp8lab.gates.g1 import G1_SHARD_SCALES
from fp8lab.kernels import BUILTIN_KERNELS, FunctionKernel, QuantKernel, static_scale
from fp8lab.populations import G1_WORDS
from fp8lab.studies.seed_table import detector_counts

SEED_DETECTOR_COUNTS = {1.0: 0, 0.5: 0, 0.035: 0, 0.0092: 24, 7.25: 0, 0.13: 78, 0.77: 82}


@pytest.mark.parametrize("name", sorted(BUILTIN_KERNELS))
def test_builtin_kernels_pass_and_count_what_they_examined(name: str) -> None:
    result = run_g1(BUILTIN_KERNELS[name])
    assert result.status is GateStatus.PASS, result.reason
    assert result.cases == 14  # 7 scales x float32 and bfloat16
    assert result.assertions == 14 * 6  # random, saturation, tie, ladder, zero, special
    assert result.words == 14 * G1_WORDS == 14 * (4319 + 4)
    assert result.mismatches == 0 and result.assertions_failed == 0
    assert all(c.nonzero_fraction > 0.5 for c in result.case_results)


def test_divide_vs_reciprocal_reproduces_the_seed_counts() -> None:
    """Seed PR #842: on the 209 tie + ladder words, f32 input, divide exposes 24/78/82."""
    rows = detector_counts(sorted(SEED_DETECTOR_COUNTS))
    assert {r.scale: r.exposed_float32 for r in rows} == SEED_DETECTOR_COUNTS
    assert all(r.words == 209 and r.exposed_bfloat16 == 0 for r in rows)
    assert all(r.published == SEED_DETECTOR_COUNTS[r.scale] for r in rows)
    with pytest.raises(ValueError, match="no scales"):
        detector_counts([])


def test_record_serialises_with_counts_and_offenders() -> None:
    divide = FunctionKernel("divide", lambda x, s: encode(x.astype(np.float32) / np.float32(s)))
    result = run_g1(divide, shard_scales=())  # the seed's cases
    data = json.loads(result.to_json())
    assert data["status"] == "FAIL"
    by_class = data["mismatches_by_class"]
    assert by_class["tie"] + by_class["ladder"] == 24 + 78 + 82
    assert by_class["random"] == by_class["saturation"] == by_class["zero"] == 0
    per_case = {c["name"]: c["mismatches"] for c in data["case_results"] if c["mismatches"]}
    assert per_case == {"s=0.0092/float32": 24, "s=0.13/float32": 78, "s=0.77/float32": 82}
    assert data["first_offenders"][0]["case"] == "s=0.0092/float32"
    assert data["first_offenders"][0]["input_hex"].startswith("0x")
    assert len(data["case_results"]) == 14


def test_empty_scale_list_examines_nothing_and_fails() -> None:
    result = run_g1(BUILTIN_KERNELS["vllm_cpp"], scales=(), shard_scales=())
    assert result.status is GateStatus.FAIL
    assert result.reason == "examined nothing"
    assert result.words == 0


def test_vacuous_reference_fails() -> None:
    # At a huge scale every random word quantizes to zero: the guard must fire.
    result = run_g1(BUILTIN_KERNELS["vllm_cpp"], scales=(2.0**100,))
    assert result.status is GateStatus.FAIL
    assert "vacuous" in result.reason


def test_unknown_input_dtype_is_refused() -> None:
    with pytest.raises(ValueError, match="input dtypes"):
        run_g1(BUILTIN_KERNELS["vllm_cpp"], input_dtypes=("float16",))


def test_g2_is_pending_and_exit_codes_distinguish_it() -> None:
    kernel: QuantKernel = BUILTIN_KERNELS["vllm_cpp"]
    pending = run_g2(kernel)
    assert pending.status is GateStatus.PENDING and pending.reason
    passed = run_g1(kernel, scales=G1_SCALES[:1])
    assert exit_code([passed]) == 0
    assert exit_code([passed, pending]) == 3
    failed = GateResult("G1", "x", GateStatus.FAIL, "r", 1, 1, 1, 1, 1, 0)
    assert exit_code([passed, pending, failed]) == 1
    with pytest.raises(ValueError, match="no gate"):
        exit_code([])


def test_special_words_check_the_declared_nan_policy() -> None:
    def keeps_nan_sign(x: np.ndarray, s: object) -> np.ndarray:
        return encode(
            x.astype(np.float32) / np.float32(1.0) * (np.float32(1) / static_scale(s)),
            nan="keep-sign",
        )

    strict = run_g1(FunctionKernel("keeps_sign", keeps_nan_sign))
    assert strict.status is GateStatus.FAIL and strict.mismatches == 0
    assert strict.nan_code_mismatches == 14 and "NaN" in strict.reason
    seed_only = run_g1(FunctionKernel("keeps_sign", keeps_nan_sign), special_words=False)
    assert seed_only.status is GateStatus.PASS and seed_only.words == 14 * 4319

    def upstream_like(x: np.ndarray, s: object) -> np.ndarray:
        return BUILTIN_KERNELS["upstream"].quantize(x, s)

    assert run_g1(FunctionKernel("up", upstream_like)).status is GateStatus.FAIL
    upstream_like.nan_policy = "clamp-pos"  # type: ignore[attr-defined]
    assert run_g1(FunctionKernel("up", upstream_like)).status is GateStatus.PASS


def test_by_default_every_call_gets_one_float32_scale() -> None:
    seen: list[object] = []

    def natural(x: np.ndarray, scale: float) -> np.ndarray:
        seen.append(scale)
        return BUILTIN_KERNELS["vllm_cpp"].quantize(x, scale)

    result = run_g1(FunctionKernel("natural", natural))
    assert result.status is GateStatus.PASS and result.cases == 14
    assert all(np.ndim(s) == 0 for s in seen) and len(seen) == 14


def test_the_shard_case_runs_when_asked_and_names_its_convention() -> None:
    def scalar_only(x: np.ndarray, scale: float) -> np.ndarray:
        return BUILTIN_KERNELS["vllm_cpp"].quantize(x, float(scale))  # TypeError on an array

    result = run_g1(FunctionKernel("scalar_only", scalar_only), shard_scales=G1_SHARD_SCALES)
    assert result.status is GateStatus.FAIL and result.cases == 16
    assert "G1's shard case calls quantize(x, scales)" in result.reason
    assert (
        run_g1(BUILTIN_KERNELS["vllm_cpp"], shard_scales=G1_SHARD_SCALES).status is GateStatus.PASS
    )


def test_a_wrong_signature_is_told_the_convention() -> None:
    def one_arg(x: np.ndarray) -> np.ndarray:
        return x.astype(np.uint8)

    result = run_g1(FunctionKernel("one_arg", one_arg))  # type: ignore[arg-type]
    assert result.status is GateStatus.FAIL
    assert "G1 calls quantize(x, scale) with x a float32 or bfloat16 array [N]" in result.reason
