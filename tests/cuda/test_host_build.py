"""The cuda-host build: g++ against the PyPI CUDA headers, cached, one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fp8lab
from fp8lab.cuda import (
    CudaHostBuildError,
    build_cuda_host,
    check_conversion_facts,
    cuda_host_kernel,
    cuda_include_dirs,
)
from fp8lab.cuda.host_kernel import cuda_host_encoder, cuda_host_matmul_kernel
from fp8lab.gates import GateStatus, run_g1, run_g3
from fp8lab.kernels import quant_static_upstream
from tests.cuda.conftest import host_library, needs_gxx

pytestmark = pytest.mark.process

SOURCE_DIR = Path(fp8lab.__file__).parent / "cuda"


def test_the_headers_come_from_the_pinned_wheels() -> None:
    dirs = cuda_include_dirs()
    assert any((d / "cuda_fp8.hpp").is_file() for d in dirs)
    text = next(d / "cuda_fp8.hpp" for d in dirs if (d / "cuda_fp8.hpp").is_file()).read_text()
    # the device conversion and the host path's NaN and 464 constants, checked in the header
    assert "cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" in text
    assert "xbits = 0x7FFFFFFFU;" in text and "0x407D000000000000ULL" in text


def test_missing_headers_are_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FP8LAB_CUDA_INCLUDE", str(tmp_path))
    with pytest.raises(CudaHostBuildError) as info:
        build_cuda_host()
    assert info.value.missing and "\n" not in str(info.value)
    assert "nvidia-cuda-runtime" in str(info.value)


def test_missing_compiler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "no-such-g++")
    with pytest.raises(CudaHostBuildError, match=r"^C\+\+ compiler 'no-such-g\+\+' not found"):
        build_cuda_host()


@needs_gxx
def test_a_compile_error_is_one_line_and_not_missing() -> None:
    with pytest.raises(CudaHostBuildError) as info:
        build_cuda_host(("fp8lab_quant_one=(",))
    assert not info.value.missing and "\n" not in str(info.value)


@needs_gxx
def test_builds_into_the_cache_keyed_by_defines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FP8LAB_CACHE", str(tmp_path))
    plain = host_library()
    planted = host_library(("FP8LAB_PLANT_DIVIDE",))
    assert plain.is_relative_to(tmp_path) and planted.is_relative_to(tmp_path)
    assert plain != planted and host_library() == plain
    assert not list(SOURCE_DIR.glob("*.so"))


@needs_gxx
def test_cuda_host_quant_is_the_upstream_kernel_through_the_c_abi() -> None:
    host_library()
    kernel = cuda_host_kernel()
    assert kernel.name == "cuda-host" and kernel.nan_policy == "clamp-pos"
    x = np.array([1.0, -np.nan, np.nan, 464.0, -1e9, 0.0009765625, -0.0], np.float32)
    assert kernel.quantize(x, 1.0).tolist() == quant_static_upstream(x, 1.0).tolist()
    assert kernel.quantize(x, 1.0).tolist() == [0x38, 0x7E, 0x7E, 0x7E, 0xFE, 0x00, 0x80]


@needs_gxx
def test_cuda_host_passes_g1() -> None:
    host_library()
    result = run_g1(cuda_host_kernel())
    assert result.status is GateStatus.PASS, result.reason
    assert result.nan_policy == "clamp-pos" and result.words > 0


@needs_gxx
@pytest.mark.parametrize("epilogue", ["folded", "two_scalar"])
def test_cuda_host_gemm_passes_g3_with_either_epilogue(epilogue: str) -> None:
    host_library()
    result = run_g3(cuda_host_matmul_kernel(epilogue))
    assert result.status is GateStatus.PASS, result.reason
    assert result.mismatches == 0 and result.cases == 9


@needs_gxx
def test_host_encoders_canonicalise_nan() -> None:
    host_library()
    encoder = cuda_host_encoder()
    nan = encoder.encode_range("e4m3fn", 0xFFC0_0000, 0xFFC0_0004)
    assert nan.tolist() == [0x7F] * 4  # -NaN -> 0x7F: the sign is dropped
    assert encoder.encode_range("e5m2", 0xFFC0_0000, 0xFFC0_0001).tolist() == [0x7F]
    with pytest.raises(ValueError, match="e4m3fnuz"):
        encoder.encode_range("e4m3fnuz", 0, 1)


def test_every_conversion_fact_is_in_the_installed_header() -> None:
    facts = check_conversion_facts()
    assert len(facts) == 4 and all(f.in_header for f in facts), facts
