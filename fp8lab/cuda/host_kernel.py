"""The ``cuda-host`` kernels: the CUDA C sources built for the host, called through ctypes.

``fp8lab_quant`` and ``fp8lab_matmul`` follow the C ABI of
``fp8lab/abi/fp8lab_kernel.h``; the library also exports
``fp8lab_matmul_two_scalar`` and the pattern-range encoders
``fp8lab_encode_{e4m3fn,e5m2}_range(start, n, out)``. Conversion is
cuda_fp8.hpp's host path (schemes-and-order §5.1): NaN is canonicalised
first, so every NaN input gives 0x7F, whatever its sign; the quant clamps
first, so NaN -> 0x7E there (NaN policy ``clamp-pos``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.cuda.host_build import build_cuda_host
from fp8lab.cuda.marshal import OUT_DTYPE_CODES, quant_args
from fp8lab.gemm.protocol import MatmulSpec, validate_matmul_args

__all__ = [
    "CUDA_HOST",
    "CudaHostKernel",
    "CudaHostMatmulKernel",
    "cuda_host_kernel",
    "cuda_host_matmul_kernel",
    "load_cuda_host",
]

CUDA_HOST = "cuda-host"
_P = ctypes.c_void_p
_I64 = ctypes.c_int64
_QUANT = (_P, ctypes.c_int32, _I64, ctypes.c_float, _P)
_MATMUL = (_P, _P, _I64, _I64, _I64, ctypes.c_float, ctypes.c_float, ctypes.c_int32, _P)
_RANGE = (ctypes.c_uint64, _I64, _P)


@cache
def load_cuda_host(path: Path) -> ctypes.CDLL:
    """Open the library at ``path`` and declare its functions' C types."""
    lib = ctypes.CDLL(str(path))
    for name, argtypes in (
        ("fp8lab_quant", _QUANT),
        ("fp8lab_matmul", _MATMUL),
        ("fp8lab_matmul_two_scalar", _MATMUL),
        ("fp8lab_encode_e4m3fn_range", _RANGE),
        ("fp8lab_encode_e5m2_range", _RANGE),
    ):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, ctypes.c_int32
    return lib


def _ptr(a: np.ndarray) -> int:
    return int(a.ctypes.data)


def _check(rc: int, name: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{name} returned {rc}")


@dataclass(frozen=True)
class CudaHostKernel:
    """The upstream static quant of ``fp8lab/cuda`` built for the host (a QuantKernel)."""

    path: Path
    name: str = CUDA_HOST
    nan_policy: str = "clamp-pos"

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """e4m3fn codes of ``x`` (float32 or bfloat16) under ``scale``.

        Raises:
            RuntimeError: the library returned non-zero.
        """
        args = quant_args(x, scale)
        out = np.empty(args.n, np.uint8)
        lib = load_cuda_host(self.path)
        _check(lib.fp8lab_quant(_ptr(args.x), args.x_dtype, args.n, args.scale, _ptr(out)), "q")
        return out.reshape(args.shape)

    def encode_range(self, fmt: str, start: int, stop: int) -> npt.NDArray[np.uint8]:
        """The code (``fmt`` e4m3fn or e5m2, SATFINITE) of every float32 pattern in [start, stop).

        Raises:
            ValueError: for another format.
            RuntimeError: the library returned non-zero.
        """
        if fmt not in ("e4m3fn", "e5m2"):
            raise ValueError(f"cuda-host encodes e4m3fn and e5m2, not {fmt!r}")
        out = np.empty(stop - start, np.uint8)
        fn = getattr(load_cuda_host(self.path), f"fp8lab_encode_{fmt}_range")
        _check(fn(start, stop - start, _ptr(out)), fn.__name__)
        return out


@dataclass(frozen=True)
class CudaHostMatmulKernel:
    """The fp8 GEMM of ``fp8lab/cuda`` built for the host (a MatmulKernel with its spec)."""

    path: Path
    spec: MatmulSpec = MatmulSpec()
    name: str = CUDA_HOST

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """``epilogue(A·Bᵀ)`` as [M,N] float32 or bfloat16.

        Raises:
            ValueError: for arguments outside the MatmulFp8 contract.
            RuntimeError: the library returned non-zero.
        """
        a, b, si, sw, od = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        (m, k), n = a.shape, b.shape[0]
        out = np.empty((m, n), np.float32 if od == "f32" else np.uint16)
        lib = load_cuda_host(self.path)
        fn = lib.fp8lab_matmul_two_scalar if self.spec.epilogue == "two_scalar" else lib.fp8lab_matmul
        _check(fn(_ptr(a), _ptr(b), m, n, k, si, sw, OUT_DTYPE_CODES[od], _ptr(out)), fn.__name__)
        return out if od == "f32" else out.view(ml_dtypes.bfloat16)


def cuda_host_kernel(defines: Sequence[str] = ()) -> CudaHostKernel:
    """Build (cached) and return the ``cuda-host`` quant kernel."""
    return CudaHostKernel(build_cuda_host(defines))


def cuda_host_matmul_kernel(epilogue: str = "folded") -> CudaHostMatmulKernel:
    """Build (cached) and return the ``cuda-host`` GEMM with the ``folded`` or ``two_scalar`` epilogue.

    Raises:
        ValueError: for another epilogue.
    """
    if epilogue not in ("folded", "two_scalar"):
        raise ValueError(f"cuda-host GEMM epilogues are folded and two_scalar, not {epilogue!r}")
    return CudaHostMatmulKernel(build_cuda_host(), MatmulSpec(epilogue=epilogue))
