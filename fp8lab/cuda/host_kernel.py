"""The ``cuda-host`` kernels: the CUDA C sources built for the host, loaded like any C ABI library.

``fp8lab_quant`` and ``fp8lab_matmul`` follow ``fp8lab/abi/fp8lab_kernel.h``
and load through :func:`fp8lab.kernels.load_shared`; the library also
exports ``fp8lab_matmul_two_scalar`` (same signature) and the pattern-range
encoders ``fp8lab_encode_{e4m3fn,e5m2}_range(start, n, out)``. Conversion is
cuda_fp8.hpp's host path: NaN is canonicalised
first, so every NaN input gives 0x7F whatever its sign; the quant clamps
first, so NaN -> 0x7E there (NaN policy ``clamp-pos``).
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.cuda.host_build import build_cuda_host
from fp8lab.kernels.matmul_protocol import MatmulSpec
from fp8lab.kernels.sources.shared import SharedMatmulKernel, SharedQuantKernel, load_shared

__all__ = [
    "CUDA_HOST",
    "ENCODER_FORMATS",
    "CudaHostEncoder",
    "cuda_host_encoder",
    "cuda_host_kernel",
    "cuda_host_matmul_kernel",
]

CUDA_HOST = "cuda-host"
ENCODER_FORMATS = ("e4m3fn", "e5m2")
_MATMUL_SYMBOLS = {"folded": "fp8lab_matmul", "two_scalar": "fp8lab_matmul_two_scalar"}


@cache
def _range_function(path: Path, fmt: str) -> Any:
    fn = getattr(ctypes.CDLL(str(path)), f"fp8lab_encode_{fmt}_range")
    fn.argtypes = (ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p)
    fn.restype = ctypes.c_int32
    return fn


@dataclasses.dataclass(frozen=True)
class CudaHostEncoder:
    """The CUDA encoders (SATFINITE) built for the host, over float32 pattern ranges."""

    path: Path
    name: str = CUDA_HOST
    xp: Any = np

    def encode_range(self, fmt: str, start: int, stop: int) -> npt.NDArray[np.uint8]:
        """The code of every float32 pattern in [start, stop).

        Raises:
            ValueError: for a format other than e4m3fn and e5m2, or a range outside [0, 2**32).
            RuntimeError: the library returned non-zero.
        """
        if fmt not in ENCODER_FORMATS:
            raise ValueError(f"cuda-host encodes {' and '.join(ENCODER_FORMATS)}, not {fmt!r}")
        if not 0 <= start <= stop <= 1 << 32:
            raise ValueError(f"pattern range [{start}, {stop}) is not inside [0, 2**32)")
        out = np.empty(stop - start, np.uint8)
        status = _range_function(self.path, fmt)(start, stop - start, out.ctypes.data)
        if status != 0:
            raise RuntimeError(f"fp8lab_encode_{fmt}_range returned {status}")
        return out


def cuda_host_kernel(defines: Sequence[str] = ()) -> SharedQuantKernel:
    """Build (cached) the host library and load its ``fp8lab_quant`` as the ``cuda-host`` kernel.

    Args:
        defines: extra ``-D`` switches for the build (planted defects in meta tests).
    """
    kernel = load_shared(build_cuda_host(defines), "fp8lab_quant", "quant", nan_policy="clamp-pos")
    assert isinstance(kernel, SharedQuantKernel)
    return dataclasses.replace(kernel, name=CUDA_HOST)


def cuda_host_matmul_kernel(
    epilogue: str = "folded", defines: Sequence[str] = ()
) -> SharedMatmulKernel:
    """Build (cached) and load the host GEMM with the ``folded`` or ``two_scalar`` epilogue.

    Raises:
        ValueError: for another epilogue.
    """
    if epilogue not in _MATMUL_SYMBOLS:
        raise ValueError(
            f"cuda-host GEMM epilogues are {sorted(_MATMUL_SYMBOLS)}, not {epilogue!r}"
        )
    path = build_cuda_host(defines)
    spec = MatmulSpec(epilogue=epilogue)
    kernel = load_shared(path, _MATMUL_SYMBOLS[epilogue], "matmul", spec=spec)
    assert isinstance(kernel, SharedMatmulKernel)
    return dataclasses.replace(kernel, name=CUDA_HOST)


def cuda_host_encoder(defines: Sequence[str] = ()) -> CudaHostEncoder:
    """Build (cached) the host library and return its pattern-range encoders."""
    return CudaHostEncoder(build_cuda_host(defines))
