"""G2h and G2 go red on planted defects.

Defects are compiled into the CUDA source with -D switches (dividing by the
scale instead of multiplying by the reciprocal; dropping the fminf/fmaxf
clamp), or planted in an encoder backend (one wrong code on a non-NaN
pattern; a NaN that keeps its sign; a NaN that becomes a number). G2 runs
through the numpy stand-in for cupy (tests/cuda/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from fp8lab.cuda.device import CudaProbe
from fp8lab.cuda.host_kernel import cuda_host_encoder
from fp8lab.gates import GateStatus, run_g2, run_g2h
from fp8lab.gates.cuda_compare import NanTally, encoder_cases
from fp8lab.gates.records import Offender
from fp8lab.kernels import BUILTIN_KERNELS
from tests.cuda.conftest import FakeCupy, host_library, needs_gxx

PATTERNS = ((0x43DF_F000, 0x43E8_1000), (0xFF7F_F000, 0xFF80_4000))
DEFECTS = ("FP8LAB_PLANT_DIVIDE", "FP8LAB_PLANT_NO_CLAMP")


@needs_gxx
@pytest.mark.parametrize("defect", DEFECTS)
def test_g2h_fails_a_defect_compiled_into_the_cuda_source(defect: str) -> None:
    host_library((defect,))
    result = run_g2h(patterns=PATTERNS, defines=(defect,))
    assert result.status is GateStatus.FAIL and result.mismatches_by_class["quant"] > 0
    assert "CPU and CUDA quant differ" in result.reason and result.first_offenders


@needs_gxx
@pytest.mark.parametrize("defect", DEFECTS)
def test_g2_fails_a_defect_compiled_into_the_device_source(defect: str) -> None:
    cp = FakeCupy(host_library((defect,)))
    result = run_g2(probe=lambda: CudaProbe(None, "", 90, cp), patterns=PATTERNS, defines=(defect,))
    assert result.status is GateStatus.FAIL and result.mismatches_by_class["quant"] > 0
    assert f"#define {defect}\n" in cp.sources[0]


@needs_gxx
def test_g2h_fails_an_e5m2_encoder_that_overflows_to_inf() -> None:
    # __NV_NOSAT instead of __NV_SATFINITE: values past 61440 become inf (0x7C), not 57344.
    defect = ("FP8LAB_PLANT_E5M2_NOSAT",)
    host_library(defect)
    top = ((0x4770_0000, 0x4780_1000),)
    result = run_g2h(scales=(), input_dtypes=(), patterns=top, defines=defect)
    assert result.status is GateStatus.FAIL, result.reason
    assert "the CUDA encoder differs from the scan reference in 1 ranges" in result.reason
    assert {o.case.split()[0] for o in result.first_offenders} == {"e5m2"}
    assert {o.got for o in result.first_offenders} == {"0x7c"}
    assert run_g2h(scales=(), input_dtypes=(), patterns=top).status is GateStatus.PASS


@needs_gxx
def test_g2h_fails_a_cpu_kernel_with_another_nan_policy() -> None:
    host_library()
    result = run_g2h(BUILTIN_KERNELS["vllm_cpp"], patterns=PATTERNS[:1])
    assert result.status is GateStatus.FAIL
    assert {o.word_class for o in result.first_offenders} == {"special"}


@dataclass
class Planted:
    """The host encoder with one planted change to its codes."""

    change: str
    inner: Any
    xp: Any = np

    def encode_range(self, fmt: str, start: int, stop: int) -> np.ndarray:
        codes = np.array(self.inner.encode_range(fmt, start, stop))
        patterns = np.arange(start, stop, dtype=np.int64)
        if self.change == "one-off":
            codes[patterns == 0x43E0_0001] ^= 1
        elif self.change == "nan-keeps-sign":
            codes[patterns > 0xFF80_0000] = 0xFF
        elif self.change == "nan-to-max":
            codes[patterns == 0xFF80_0001] = 0xFE
        return codes


@needs_gxx
@pytest.mark.parametrize(
    ("change", "exact_red", "nan_code_red"),
    [("one-off", True, True), ("nan-keeps-sign", True, False), ("nan-to-max", True, True)],
)
def test_encoder_cases_go_red_as_their_nan_rule_says(
    change: str, exact_red: bool, nan_code_red: bool
) -> None:
    host_library()
    backend = Planted(change, cuda_host_encoder())
    for rule, red in (("exact", exact_red), ("nan-code", nan_code_red)):
        tally, offenders = NanTally(), list[Offender]()
        cases = encoder_cases(backend, "e4m3fn", PATTERNS, rule, offenders, 8, tally, 1 << 12)
        assert any(c.assertions_failed for c in cases) is red, (change, rule)
        assert bool(offenders) is red
    if change == "nan-keeps-sign":
        assert tally.signed == 0x3FFF and tally.canonical == 0  # measured either way


def test_encoder_cases_refuse_an_unknown_nan_rule() -> None:
    with pytest.raises(ValueError, match="nan_rule"):
        encoder_cases(Planted("", None), "e4m3fn", (), "loose", [], 8, NanTally())
