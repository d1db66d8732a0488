"""The CUDA arm on a device: probe for cupy, a driver and a device, then compile and launch.

``cupy`` is imported by module name, so cupy-cuda12x and cupy-cuda13x both
serve; this module needs only numpy, ml_dtypes and cupy. The device source is
``device_kernels.cu`` with ``fp8lab_cuda.cuh`` pasted in, compiled by
``cupy.RawModule`` (NVRTC) with no CUDA header: the conversion is the inline
PTX ``cvt.rn.satfinite.e4m3x2.f32`` that cuda_fp8.hpp emits for sm_89+ under
SATFINITE (PTX cvt.rn.satfinite), so the device must be sm_89 or newer.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.cuda.host_build import source_text
from fp8lab.cuda.marshal import QuantArgs, quant_args
from fp8lab.kernels.matmul_protocol import MatmulSpec, validate_matmul_args
from fp8lab.runtime.extras import install_line

__all__ = [
    "BLOCK",
    "KERNEL_NAMES",
    "MIN_COMPUTE_CAPABILITY",
    "DEVICE_EPILOGUES",
    "CudaDevice",
    "CudaDeviceMatmul",
    "CudaProbe",
    "device_source",
    "launch_grid",
    "probe_cuda",
    "quant_launch_args",
    "range_launch_args",
]

BLOCK = 256
MAX_GRID = 1 << 16
MIN_COMPUTE_CAPABILITY = 89
# The device GEMM's epilogue switch (two_scalar argument): fp8lab_gemm_one in fp8lab_cuda.cuh.
DEVICE_EPILOGUES = {"folded": 0, "two_scalar": 1}
KERNEL_NAMES = (
    "fp8lab_quant_kernel",
    "fp8lab_encode_e4m3fn_range",
    "fp8lab_encode_e5m2_range",
    "fp8lab_matmul_kernel",
)


@dataclass(frozen=True)
class CudaProbe:
    """What the probe found: ``missing`` is "cupy", "driver", "device" or None (ready)."""

    missing: str | None
    reason: str
    compute_capability: int = 0
    cupy: Any = None


def probe_cuda() -> CudaProbe:
    """Import cupy, then ask for the driver, a device and its compute capability."""
    try:
        cp = importlib.import_module("cupy")
    except Exception as exc:  # noqa: BLE001 - any import failure means no usable cupy
        why = f"{type(exc).__name__}: {exc}"
        return CudaProbe("cupy", f"cupy is not importable ({why}): {install_line('cuda')}")
    try:
        driver = int(cp.cuda.runtime.driverGetVersion())
    except Exception as exc:  # noqa: BLE001 - cupy raises its own CUDA error types
        return CudaProbe("driver", f"no CUDA driver ({type(exc).__name__}: {exc})")
    if driver <= 0:
        return CudaProbe("driver", "no CUDA driver (driverGetVersion() is 0)")
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001
        return CudaProbe("device", f"no CUDA device ({type(exc).__name__}: {exc})")
    if count <= 0:
        return CudaProbe("device", "no CUDA device (getDeviceCount() is 0)")
    cc = int(cp.cuda.Device(0).compute_capability)
    if cc < MIN_COMPUTE_CAPABILITY:
        return CudaProbe(
            "device",
            f"device 0 is sm_{cc}; the device conversion cvt.rn.satfinite.e4m3x2.f32 needs sm_89+",
            cc,
        )
    return CudaProbe(None, "", cc, cp)


def device_source(defines: Sequence[str] = ()) -> str:
    """The device translation unit: defines, the shared header pasted in, the kernels."""
    header = source_text("fp8lab_cuda.cuh")
    body = source_text("device_kernels.cu").replace('#include "fp8lab_cuda.cuh"', header)
    return "".join(f"#define {d.replace('=', ' ', 1)}\n" for d in defines) + body


def launch_grid(n: int) -> tuple[int, ...]:
    """Blocks for ``n`` items in grid-stride loops (at least one)."""
    return (max(1, min(MAX_GRID, -(-n // BLOCK))),)


def quant_launch_args(args: QuantArgs, x_dev: Any, out_dev: Any) -> tuple[Any, ...]:
    """``fp8lab_quant_kernel(x, x_dtype, n, scale, out)`` with the C types the kernel takes."""
    return (x_dev, np.int32(args.x_dtype), np.int64(args.n), np.float32(args.scale), out_dev)


def range_launch_args(start: int, stop: int, out_dev: Any) -> tuple[Any, ...]:
    """``fp8lab_encode_*_range(start, n, out)`` with the C types the kernel takes.

    Raises:
        ValueError: for a range outside [0, 2**32).
    """
    if not 0 <= start <= stop <= 1 << 32:
        raise ValueError(f"pattern range [{start}, {stop}) is not inside [0, 2**32)")
    return (np.uint64(start), np.int64(stop - start), out_dev)


class CudaDevice:
    """The device build as a quant kernel and an encoder backend (``xp`` is cupy)."""

    name = "cuda-device"
    nan_policy = "clamp-pos"

    def __init__(self, cp: Any, defines: Sequence[str] = ()) -> None:
        """Compile every kernel now (NVRTC), so a compile error surfaces here."""
        self.xp = cp
        self._module = cp.RawModule(code=device_source(defines), options=("--std=c++17",))
        self._kernels = {k: self._module.get_function(k) for k in KERNEL_NAMES}

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """e4m3fn codes of ``x`` (float32 or bfloat16) under ``scale``, computed on the device."""
        cp = self.xp
        args = quant_args(x, scale)
        x_dev = cp.asarray(args.x)
        out = cp.empty(args.n, cp.uint8)
        launch = quant_launch_args(args, x_dev, out)
        self._kernels["fp8lab_quant_kernel"](launch_grid(args.n), (BLOCK,), launch)
        result: npt.NDArray[np.uint8] = cp.asnumpy(out).reshape(args.shape)
        return result

    def encode_range(self, fmt: str, start: int, stop: int) -> Any:
        """Codes (SATFINITE) of every float32 pattern in [start, stop), left on the device.

        Raises:
            ValueError: for a format other than e4m3fn and e5m2.
        """
        if fmt not in ("e4m3fn", "e5m2"):
            raise ValueError(f"the device encodes e4m3fn and e5m2, not {fmt!r}")
        out = self.xp.empty(stop - start, self.xp.uint8)
        kernel = self._kernels[f"fp8lab_encode_{fmt}_range"]
        kernel(launch_grid(stop - start), (BLOCK,), range_launch_args(start, stop, out))
        return out


class CudaDeviceMatmul:
    """The device GEMM (f32 accumulation in k order) as a matmul kernel G3 can check.

    ``spec`` declares the epilogue the launch selects, so G3 holds the device to
    the model of that epilogue.
    """

    name = "cuda-device"

    def __init__(self, device: CudaDevice, epilogue: str = "folded") -> None:
        """Select ``folded`` or ``two_scalar``.

        Raises:
            ValueError: for another epilogue.
        """
        if epilogue not in DEVICE_EPILOGUES:
            raise ValueError(
                f"device GEMM epilogues are {sorted(DEVICE_EPILOGUES)}, not {epilogue!r}"
            )
        self.device, self.epilogue = device, epilogue
        self.spec = MatmulSpec(epilogue=epilogue)

    def matmul(self, a_codes: Any, b_codes: Any, s_in: Any, s_w: Any, out_dtype: str) -> Any:
        """[M,N] float32 or bfloat16 from [M,K] and [N,K] e4m3fn codes, computed on the device."""
        a, b, si, sw, out_name = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
        cp = self.device.xp
        m, k, n = a.shape[0], a.shape[1], b.shape[0]
        bf16 = out_name == "bf16"
        out = cp.zeros((m, n), cp.uint16 if bf16 else cp.float32)
        flags = (np.int32(1 if bf16 else 0), np.int32(DEVICE_EPILOGUES[self.epilogue]))
        operands = (cp.asarray(np.ascontiguousarray(a)), cp.asarray(np.ascontiguousarray(b)))
        sizes = (np.int64(m), np.int64(n), np.int64(k), np.float32(si), np.float32(sw))
        args = (*operands, *sizes, *flags, out)
        self.device._kernels["fp8lab_matmul_kernel"](launch_grid(m * n), (BLOCK,), args)
        host = cp.asnumpy(out)
        return host.view(ml_dtypes.bfloat16) if bf16 else host
