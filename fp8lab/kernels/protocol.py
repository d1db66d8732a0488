"""The kernel under test: the one abstraction gates, sweeps and mutants take.

A kernel quantizes an activation with a static per-tensor scale and can
encode already-scaled float32 values. Built-in ports, mutants, a CUDA backend
and a user's own callable all implement :class:`QuantKernel`; no gate knows
where its kernel came from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["FunctionKernel", "QuantKernel", "QuantizeFn"]

QuantizeFn = Callable[[np.ndarray, Any], np.ndarray]


@runtime_checkable
class QuantKernel(Protocol):
    """A static FP8 quantization kernel under test."""

    @property
    def name(self) -> str:
        """Short id used in records."""
        ...

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Codes for ``x`` (float32 or bfloat16) under ``scale``."""
        ...

    def encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        """Codes for already-scaled float32 values ``y``."""
        ...


@dataclass(frozen=True)
class FunctionKernel:
    """Wrap a user callable ``func(x, scale) -> uint8 codes`` as a kernel.

    ``encode(y)`` is ``func(y, 1.0)``: for every y, ``y * float32(1/1.0) == y``
    bit for bit (NaN stays NaN), so a correct kernel encodes y unchanged.
    The NaN policy is read from ``func.nan_input_code`` if the callable has
    one, else it is vllm.cpp's (NaN -> 0x7F).
    """

    name: str
    func: QuantizeFn

    @property
    def nan_input_code(self) -> int:
        """The code the wrapped kernel declares for a NaN input."""
        return int(getattr(self.func, "nan_input_code", 0x7F))

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Call the wrapped function."""
        return self.func(x, scale)

    def encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        """Quantize with scale 1.0."""
        return self.func(y, np.float32(1.0))
