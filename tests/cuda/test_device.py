"""The device arm without a device: probes, PENDING reasons, marshalling, G2's launch path.

The launch path runs against a numpy stand-in for cupy whose kernels are the
host build's (tests/cuda/conftest.py), so everything up to the GPU is exercised.
"""

from __future__ import annotations

import subprocess
import sys
import types
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.cuda import quant_args
from fp8lab.cuda.device import (
    DEVICE_EPILOGUES,
    CudaDevice,
    CudaDeviceMatmul,
    CudaProbe,
    device_source,
    launch_grid,
    probe_cuda,
    quant_launch_args,
    range_launch_args,
)
from fp8lab.gates import GateStatus, run_g2, run_g3
from fp8lab.populations import g1_population
from tests.cuda.conftest import FakeCupy, host_library, needs_gxx

pytestmark = pytest.mark.notebook

WORDS = g1_population(1.0).words.size
SMALL = ((0x43E0_0000 - 4096, 0x43E0_0000 + 4096), (0xFF80_0000, 0xFF80_4000))


def fake_cupy(driver: Any = 12090, count: Any = 1, cc: str = "90") -> types.SimpleNamespace:
    def value(v: Any) -> Any:
        if isinstance(v, Exception):
            raise v
        return v

    runtime = types.SimpleNamespace(
        driverGetVersion=lambda: value(driver), getDeviceCount=lambda: value(count)
    )
    device = types.SimpleNamespace(compute_capability=cc)
    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=runtime, Device=lambda i: device)
    )


@pytest.mark.parametrize(
    ("cupy", "missing", "words"),
    [
        (None, "cupy", "not importable"),
        (fake_cupy(driver=RuntimeError("cudaErrorInsufficientDriver")), "driver", "no CUDA driver"),
        (fake_cupy(driver=0), "driver", "no CUDA driver"),
        (fake_cupy(count=RuntimeError("cudaErrorNoDevice")), "device", "no CUDA device"),
        (fake_cupy(count=0), "device", "no CUDA device"),
        (fake_cupy(cc="80"), "device", "sm_80"),
    ],
)
def test_each_missing_piece_is_pending_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, cupy: Any, missing: str, words: str
) -> None:
    monkeypatch.setitem(sys.modules, "cupy", cupy)  # None makes the import fail
    found = probe_cuda()
    assert found.missing == missing and words in found.reason
    result = run_g2()
    assert result.status is GateStatus.PENDING and result.words == 0
    assert f"missing {missing}" in result.reason and words in result.reason


def test_a_ready_probe_names_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(cc="90"))
    found = probe_cuda()
    assert found.missing is None and found.compute_capability == 90


def test_quant_arguments_are_marshalled_as_the_abi_says() -> None:
    x = np.array([[1.5, -2.0], [np.nan, 3.0]], np.float32)
    args = quant_args(x, 0.5)
    assert args.x_dtype == 0 and args.n == 4 and args.shape == (2, 2)
    assert args.x.dtype == np.float32 and args.x.flags.c_contiguous
    assert args.x.tobytes() == x.tobytes() and args.scale == np.float32(0.5)
    b = quant_args(x.astype(ml_dtypes.bfloat16), np.array([0.25, 0.5], np.float32))
    assert b.x_dtype == 1 and b.x.dtype == np.uint16 and b.scale == np.float32(0.5)
    launch = quant_launch_args(args, "X", "OUT")
    assert [type(a) for a in launch[1:4]] == [np.int32, np.int64, np.float32]
    assert launch[0] == "X" and launch[4] == "OUT"
    start, n, _ = range_launch_args(0xFFFF_FF00, 1 << 32, "OUT")
    assert (type(start), type(n), int(start), int(n)) == (np.uint64, np.int64, 0xFFFF_FF00, 256)
    with pytest.raises(ValueError, match="not inside"):
        range_launch_args(0, (1 << 32) + 1, None)
    with pytest.raises(TypeError, match="float32 or bfloat16"):
        quant_args(np.zeros(2, np.float64), 1.0)
    assert (
        launch_grid(0) == (1,) and launch_grid(257) == (2,) and launch_grid(1 << 40) == (1 << 16,)
    )


def test_the_device_source_pastes_the_header_and_needs_no_cuda_header() -> None:
    src = device_source(("FP8LAB_PLANT_DIVIDE", "FP8LAB_E4M3_MAX=447.0f"))
    assert src.startswith("#define FP8LAB_PLANT_DIVIDE\n#define FP8LAB_E4M3_MAX 447.0f\n")
    assert '#include "fp8lab_cuda.cuh"' not in src and "fp8lab_quant_one" in src
    assert "cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" in src
    assert "#if !defined(__CUDA_ARCH__) || defined(FP8LAB_DEVICE_USE_HEADER)" in src


def ready(cp: FakeCupy) -> CudaProbe:
    return CudaProbe(None, "", 90, cp)


@needs_gxx
def test_g2_runs_its_launch_path_and_passes_a_faithful_device() -> None:
    cp = FakeCupy(host_library())
    result = run_g2(probe=lambda: ready(cp), patterns=SMALL)
    assert result.status is GateStatus.PASS, result.reason
    # Both device encoders (e4m3fn, e5m2) over each range.
    assert result.cases == 14 + 2 * len(SMALL)
    assert result.words == 14 * WORDS + 2 * sum(b - a for a, b in SMALL)
    assert result.measured["compute_capability"] == 90
    assert result.measured["nan->canonical"] == 0x4000 - 1
    # The stand-in runs the host path: e5m2 NaN 0x7F, a NaN code but not fp8lab's 0x7E.
    assert result.measured["e5m2 nan->canonical"] == 0
    assert result.measured["e5m2 nan->not-nan"] == 0
    assert "cvt.rn.satfinite.e4m3x2.f32" in result.scope and cp.sources


@needs_gxx
def test_a_compile_error_on_a_present_device_is_a_fail() -> None:
    cp = FakeCupy(host_library(), compile_error="error: identifier 'x' is undefined")
    result = run_g2(probe=lambda: ready(cp))
    assert result.status is GateStatus.FAIL
    assert result.reason == "CUDA compile error: error: identifier 'x' is undefined"


def test_the_gpu_path_imports_only_numpy_ml_dtypes_and_cupy() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'numba', 'matplotlib', 'psutil', 'yaml',\n"
        "                'papermill', 'nbformat', 'nbconvert', 'IPython', 'hypothesis'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import fp8lab.cuda, fp8lab.cuda.device, fp8lab.gates.g2\n"
        "assert 'cupy' not in sys.modules or sys.modules['cupy'] is None\n"
        "print(fp8lab.gates.g2.run_g2().status.value)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "PENDING"


@needs_gxx
@pytest.mark.parametrize("epilogue", sorted(DEVICE_EPILOGUES))
def test_g3_passes_the_device_gemm_through_its_launch_path(epilogue: str) -> None:
    device = CudaDevice(FakeCupy(host_library()))
    result = run_g3(CudaDeviceMatmul(device, epilogue))
    assert result.status is GateStatus.PASS, result.reason
    assert result.kernel == "cuda-device" and result.words > 0


@needs_gxx
def test_g3_fails_a_device_gemm_that_sums_k_backwards() -> None:
    defect = ("FP8LAB_PLANT_GEMM_REVERSED_K",)
    device = CudaDevice(FakeCupy(host_library(defect)), defect)
    result = run_g3(CudaDeviceMatmul(device))
    assert result.status is GateStatus.FAIL and "bitwise mismatches" in result.reason


@needs_gxx
def test_g3_fails_a_device_gemm_launched_with_the_other_epilogue() -> None:
    # The wrapper declares folded but launches two_scalar: G3 holds it to folded's model.
    device = CudaDevice(FakeCupy(host_library()))
    kernel = CudaDeviceMatmul(device, "two_scalar")
    kernel.spec = CudaDeviceMatmul(device, "folded").spec
    assert run_g3(kernel).status is GateStatus.FAIL


def test_the_device_gemm_refuses_an_unknown_epilogue() -> None:
    with pytest.raises(ValueError, match="device GEMM epilogues"):
        CudaDeviceMatmul(object(), "prescaled")  # type: ignore[arg-type]


@needs_gxx
def test_g2_that_examined_nothing_fails() -> None:
    cp = FakeCupy(host_library())
    result = run_g2(probe=lambda: ready(cp), scales=(), input_dtypes=(), patterns=())
    assert result.status is GateStatus.FAIL and result.reason == "examined nothing"
    assert result.cases == result.words == 0
