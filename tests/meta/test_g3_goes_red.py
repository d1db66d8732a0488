"""Test the testers: G3 goes red on each planted GEMM defect (seed M5a, M5b and more)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GateStatus, run_g3_report
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
from fp8lab.mutants.gemm_mutants import (
    accumulates_in_bf16,
    folds_weight_scale_only,
    ignores_alpha,
    transposes_b,
)

pytestmark = pytest.mark.process


def returns_float64(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
    return np.zeros((a.shape[0], b.shape[0]))


DEFECTS = {
    "ignores_alpha": ignores_alpha,
    "folds_weight_scale_only": folds_weight_scale_only,
    "transposes_b": transposes_b,
    "accumulates_in_bf16": accumulates_in_bf16,
}


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_g3_goes_red_on_each_planted_defect(name: str) -> None:
    report = run_g3_report(FunctionMatmulKernel(name, DEFECTS[name]))
    result = report.result
    assert result.status is GateStatus.FAIL
    assert result.mismatches_by_class["bitwise"] > 0
    assert result.mismatches_by_class["tolerance"] > 0  # the lossy verdict alone catches it too
    assert result.first_offenders and result.assertions_failed > 0
    assert max(s.worst_ratio_seed for s in report.cases) > 1


def test_g3_fails_a_kernel_that_returns_the_wrong_type() -> None:
    result = run_g3_report(FunctionMatmulKernel("f64", returns_float64)).result
    assert result.status is GateStatus.FAIL
    assert all("float64" in c.error for c in result.case_results)


def test_cli_exit_status_on_a_defect(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "fp8lab.mutants.gemm_mutants:ignores_alpha"
    assert main(["gates", "--gate", "G3", "--kernel", spec]) == 1
    assert "bitwise" in capsys.readouterr().out
