"""Gate G3 on the built-in matmul kernels: verdicts, counts, bounds, guards, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GateStatus, exit_code, run_g3, run_g3_report
from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS, MATMUL_VARIANTS
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
from fp8lab.populations.gemm import LARGE_CASES, SEED_CASES, G3Case, g3_operands, remap_nan_bytes
from fp8lab.refs.gemm_bounds import gamma
from fp8lab.specs.gates import GATES, load

SEED_TABLE = [
    (1, 64, 128, 101, 0.035, 0.017, "f32"),
    (4, 32, 256, 102, 0.035, 0.017, "f32"),
    (8, 48, 128, 103, 0.041, 0.0092, "bf16"),
    (3, 16, 64, 104, 1.0, 1.0, "f32"),
]


def test_seed_cases_are_the_published_table() -> None:
    assert [(c.m, c.n, c.k, c.seed, c.s_in, c.s_w, c.out) for c in SEED_CASES] == SEED_TABLE
    assert max(c.k for c in LARGE_CASES) == 4096 and max(c.m for c in LARGE_CASES) == 1024


@pytest.mark.parametrize("name", sorted(BUILTIN_MATMUL_KERNELS))
def test_builtins_pass_count_what_they_examined_and_meet_the_tight_bound(name: str) -> None:
    report = run_g3_report(BUILTIN_MATMUL_KERNELS[name])
    result = report.result
    assert result.status is GateStatus.PASS, result.reason
    # 8 product cases with 2 verdicts each, then the NaN-propagation case (5 placements).
    assert result.cases == 9 and result.assertions == 16 + 5 and result.assertions_failed == 0
    assert result.words == sum(c.m * c.n for c in report.cases) + 5 * 3 * 16 == 13984 + 240
    assert result.mismatches == 0
    for case in report.cases:
        assert case.nonzero_fraction == 1.0
        assert 0 < case.worst_ratio_tight <= 1  # the derived bound is a theorem
        assert case.worst_ratio_seed <= case.worst_ratio_tight / case.seed_over_tight + 1e-12
        assert case.gamma_k == gamma(case.k)
    f32 = [c for c in report.cases if c.out == "f32"]
    assert all(7.7 < c.seed_over_tight <= 8.0 for c in f32)  # 8·K·u against gamma_K (or gamma_K+2)
    assert "gamma_K" in result.reason


def test_the_cuda_bf16_epilogue_fails_the_f32_tolerance_but_matches_its_model() -> None:
    result = run_g3(MATMUL_VARIANTS["upstream_cuda_bf16"])
    assert result.status is GateStatus.FAIL
    assert result.mismatches_by_class == {"bitwise": 0, "tolerance": result.mismatches}
    by_case = {c.name: c.mismatches for c in result.case_results}
    assert all(n == 0 for name, n in by_case.items() if "/bf16/" in name)


def test_record_serialises() -> None:
    report = run_g3_report(BUILTIN_MATMUL_KERNELS["vllm_cpp"], cases=SEED_CASES[:1])
    data = json.loads(report.to_json())
    assert data["result"]["status"] == "PASS" and data["result"]["gate"] == "G3"
    assert data["cases"][0]["name"] == "1x64x128/f32/seed101"


def test_vacuous_and_empty_runs_fail() -> None:
    kernel = BUILTIN_MATMUL_KERNELS["vllm_cpp"]
    zero_a = G3Case(2, 16, 16, 1, 1e6, 1.0, "f32")  # every x quantizes to zero
    result = run_g3(kernel, cases=[zero_a])
    assert result.status is GateStatus.FAIL and "vacuous" in result.reason
    empty = run_g3(kernel, cases=[])
    assert empty.status is GateStatus.FAIL and empty.reason.startswith("examined nothing")


def raises(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    raise RuntimeError("kernel exploded")


def test_a_raising_kernel_fails_with_its_error() -> None:
    result = run_g3(FunctionMatmulKernel("boom", raises), cases=SEED_CASES)
    assert result.status is GateStatus.FAIL and "kernel exploded" in result.reason
    assert exit_code([result]) == 1


def test_a_failing_or_misshapen_quant_fails_the_case_with_its_reason() -> None:
    kernel = BUILTIN_MATMUL_KERNELS["vllm_cpp"]

    def exits(x: np.ndarray, scale: Any) -> np.ndarray:
        raise SystemExit(2)

    def flat(x: np.ndarray, scale: Any) -> np.ndarray:
        return np.zeros(x.size, np.uint8)

    for quant, words in ((exits, "SystemExit"), (flat, "want uint8")):
        result = run_g3(kernel, cases=SEED_CASES[:1], quant=quant)
        assert result.status is GateStatus.FAIL
        assert "quant" in result.reason and words in result.reason


def test_operands_follow_the_stated_population() -> None:
    a, b = g3_operands(SEED_CASES[0])
    assert a.shape == (1, 128) and b.shape == (64, 128)
    assert not np.isin(b, [0x7F, 0xFF]).any()
    assert np.array_equal(
        remap_nan_bytes(np.array([0x7F, 0xFF, 0x7E, 0x00], np.uint8)), [0x7E, 0xFE, 0x7E, 0x00]
    )


def test_registry() -> None:
    assert load(GATES["G3"].runner) is run_g3 and GATES["G3"].kind == "gemm"


@pytest.mark.process
def test_cli_g3_with_a_callable_all_gates_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g3.json"
    spec = "fp8lab.kernels.matmul:matmul_vllm_cpp"
    assert main(["gates", "--gate", "G3", "--kernel", spec, "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert rows[0]["gate"] == "G3" and rows[0]["words"] == 13984 + 240
    assert main(["gates", "--gate", "G3"]) == 0
    assert capsys.readouterr().out.count("PASS") >= 2
    # G2 is owed; G2h checks one small pattern range here (tests/gates/test_g2h.py has the rest)
    monkeypatch.setattr("fp8lab.gates.g2h.G2H_PATTERNS", ((0x43E0_0000, 0x43E0_1000),))
    # every gate, GQ on one rule and GF on one recipe (every rule and recipe: fp8lab prove's
    # gates.json, published by make evidence, and the gates' own tests; 8 s against 60 s)
    one = [
        "--scheme",
        "per-tensor",
        "--rule",
        "vllm-per-tensor",
        "--recipe",
        "vllm-native-rmsnorm-fp8",
    ]
    assert main(["gates", "--gate", "all", *one]) == 3
    out = capsys.readouterr().out
    assert "G1" in out and "PENDING" in out and "G3    vllm_cpp" in out
    # a quant callable has the wrong signature for G3: a FAIL, not a crash
    assert main(["gates", "--gate", "G3", "--kernel", "fp8lab:quant_static"]) == 1
    assert main(["gates", "--gate", "G3", "--kernel", "fp8lab:nothing"]) == 2
    assert main(["gates", "--gate", "G4"]) == 2
