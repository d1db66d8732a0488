"""The kernel pair the detector compares: reciprocal-multiply and its divide mutant.

Both scale in float32 and encode with saturating RNE (OFP8 §4.2, SATFINITE):
``reciprocal`` forms ``r = float32(1) / float32(s)`` once and encodes ``x * r``
(vllm.cpp QuantFp8Static); ``divide`` encodes ``x / s`` (mutant M2).
Names resolve in any process, so workers receive names, not objects; a
``MODULE:FUNC`` runs in a child process of the one that resolves it, under a
watchdog (:mod:`fp8lab.kernels.sources.process_hosts`). Every
kernel is called through :func:`quantize_codes`: a private read-only copy of the
input (:func:`fp8lab.runtime.guard.call_kernel`), and a fault, never a traceback, for a
kernel that raises, exits or returns anything but uint8 codes of x's shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.kernels import QuantKernel, validate_scale
from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.kernels.sources.isolated import KernelLoadError
from fp8lab.kernels.sources.process_hosts import process_host
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.formats import get_format

__all__ = [
    "BUILTIN_PAIR_KERNELS",
    "KernelError",
    "ScaledEncodeKernel",
    "is_builtin_pair_kernel",
    "kernel_name",
    "quantize_codes",
    "resolve_kernel",
]

BUILTIN_PAIR_KERNELS = ("reciprocal", "divide")


class KernelError(ValueError):
    """A kernel name that cannot be resolved."""


@dataclass(frozen=True)
class ScaledEncodeKernel:
    """``encode(x * float32(1/s))`` or ``encode(x / s)`` in float32, saturating RNE.

    Args:
        name: short id used in records.
        fmt: format name.
        divide: True divides by the scale; False multiplies by its reciprocal.
    """

    name: str
    fmt: str
    divide: bool

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Codes for float32 or bfloat16 ``x`` under ``scale``.

        Raises:
            ValueError: for an invalid scale (:func:`fp8lab.kernels.validate_scale`).
        """
        s = validate_scale(scale)
        y = widen_activation(x)
        with np.errstate(over="ignore", invalid="ignore"):  # inf saturates; NaN stays NaN
            z = y / s if self.divide else y * (np.float32(1.0) / s)
        return encode(z, self.fmt, saturate=True, nan="canonical")

    def encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        """Encode already-scaled float32 values."""
        return encode(widen_activation(y), self.fmt, saturate=True, nan="canonical")


def kernel_name(kernel: str | QuantKernel) -> str:
    """The record name of a kernel given by name or object."""
    return kernel if isinstance(kernel, str) else kernel.name


@cache
def _resolve_name(name: str, fmt: str) -> QuantKernel:
    spec = get_format(fmt)
    if name in BUILTIN_PAIR_KERNELS:
        return ScaledEncodeKernel(name, spec.name, divide=name == "divide")
    if ":" not in name:
        raise KernelError(
            f"unknown kernel {name!r}: use one of {', '.join(BUILTIN_PAIR_KERNELS)} or MODULE:FUNC"
        )
    host = process_host("quant", name)
    try:
        return host.kernel()
    except KernelLoadError as exc:
        raise KernelError(str(exc).removeprefix("--kernel: ")) from None


def resolve_kernel(kernel: str | QuantKernel, fmt: str = "e4m3fn") -> QuantKernel:
    """A kernel object from a built-in name, ``MODULE:FUNC`` or a kernel itself.

    Args:
        kernel: ``"reciprocal"``, ``"divide"``, ``MODULE:FUNC`` with
            ``FUNC(x, scale) -> uint8 codes`` (or a QuantKernel), or an object.
        fmt: format the built-in kernels encode to.

    Raises:
        KernelError: for an unknown name or a failed import.
    """
    if isinstance(kernel, str):
        return _resolve_name(kernel, fmt)
    if not isinstance(kernel, QuantKernel):
        raise KernelError(f"{kernel!r} is neither a kernel name nor a QuantKernel")
    return kernel


def is_builtin_pair_kernel(kernel: str | QuantKernel) -> bool:
    """Whether ``kernel`` is one of the built-in reciprocal / divide kernels."""
    if isinstance(kernel, str):
        return kernel in BUILTIN_PAIR_KERNELS
    return type(kernel) is ScaledEncodeKernel


def quantize_codes(kernel: QuantKernel, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """``kernel.quantize(x, scale)`` on a private read-only copy of ``x``, checked.

    Raises:
        KernelFaultError: naming the kernel, if it raised or exited, or returned
            anything but a uint8 ndarray of ``x``'s shape.
    """
    name = kernel_name(kernel)
    try:
        got = call_kernel(kernel.quantize, x, scale)
    except KernelFaultError as exc:
        raise KernelFaultError(exc.line(f"kernel {name!r}"), ended=exc.ended) from None
    if not isinstance(got, np.ndarray):
        raise KernelFaultError(
            f"kernel {name!r} returned {type(got).__name__}, "
            f"want a uint8 ndarray of shape {list(np.shape(x))}"
        )
    if got.dtype != np.uint8 or got.shape != np.shape(x):
        raise KernelFaultError(
            f"kernel {name!r} returned {got.dtype}{list(got.shape)}, want uint8{list(np.shape(x))}"
        )
    return np.array(got, copy=True)
