"""The cuda-host build for the CUDA arm's tests, and a numpy stand-in for cupy.

The CUDA headers come from the ``test`` extra (nvidia-cuda-runtime, -crt,
-cccl); without them a test that needs the build fails with the one-line
reason (CI installs them). Without g++ those tests are skipped, as the
shared-library examples' are.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cuda import CudaHostBuildError, build_cuda_host

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the host build)")


def host_library(defines: tuple[str, ...] = ()) -> Path:
    try:
        return build_cuda_host(defines)
    except CudaHostBuildError as exc:
        pytest.fail(str(exc))


class FakeModule:
    """cupy.RawModule's shape, running each kernel through the host library."""

    def __init__(self, lib: Path, code: str) -> None:
        self.code = code
        self.lib = ctypes.CDLL(str(lib))

    def get_function(self, name: str) -> Any:
        host = {
            "fp8lab_quant_kernel": "fp8lab_quant",
            "fp8lab_encode_e4m3fn_range": "fp8lab_encode_e4m3fn_range",
            "fp8lab_encode_e5m2_range": "fp8lab_encode_e5m2_range",
            "fp8lab_matmul_kernel": "fp8lab_matmul",
        }[name]
        fn = getattr(self.lib, host)
        two_scalar = self.lib.fp8lab_matmul_two_scalar

        def launch(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]) -> None:
            assert grid[0] >= 1 and block == (256,)
            call = fn
            if name == "fp8lab_matmul_kernel":  # the device's two_scalar flag picks the host symbol
                *args, flag, out = args  # type: ignore[assignment]
                call = two_scalar if int(flag) else fn
                args = (*args, out)
            c_args = [
                ctypes.c_void_p(a.ctypes.data)
                if isinstance(a, np.ndarray)
                else ctypes.c_float(a)
                if isinstance(a, np.float32)
                else ctypes.c_uint64(int(a))
                if isinstance(a, np.uint64)
                else ctypes.c_int64(int(a))
                if isinstance(a, np.int64)
                else ctypes.c_int32(int(a))
                for a in args
            ]
            assert call(*c_args) == 0

        return launch


class FakeCupy:
    """numpy posing as cupy: arrays stay numpy, kernels run on the host build."""

    def __init__(self, lib: Path, compile_error: str = "") -> None:
        self.lib = lib
        self.compile_error = compile_error
        self.sources: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    def asnumpy(self, a: Any) -> np.ndarray:
        return np.asarray(a)

    def RawModule(self, code: str, options: tuple[str, ...] = ()) -> FakeModule:  # noqa: N802
        assert "--std=c++17" in options
        self.sources.append(code)
        if self.compile_error:
            raise RuntimeError(self.compile_error)
        return FakeModule(self.lib, code)
