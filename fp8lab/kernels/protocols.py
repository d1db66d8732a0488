"""The kernel under test: the one abstraction gates, sweeps and mutants take.

A kernel quantizes an activation with a static per-tensor scale. Built-in
ports, mutants, a CUDA backend and a user's own callable or object all
implement :class:`QuantKernel`; no gate knows where its kernel came from. A
kernel may declare its NaN policy by name (attribute ``nan_policy``, one of
:data:`fp8lab.specs.nan.NAN_POLICIES`); G1 reads it once, when the kernel runs
in the caller's own process, and records it.
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
    """A static FP8 quantization kernel under test: a name and ``quantize``.

    No gate calls anything else, so nothing else is required (an ``encode``
    of already-scaled values, where a kernel has one, is its own business).
    """

    @property
    def name(self) -> str:
        """Short id used in records."""
        ...

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Codes for ``x`` (float32 or bfloat16) under ``scale``."""
        ...


@dataclass(frozen=True)
class FunctionKernel:
    """Wrap a user callable ``func(x, scale) -> uint8 codes`` as a kernel.

    ``nan_policy`` is the policy stated for it by name; left out, it is what
    ``func`` declares (its ``nan_policy`` attribute), if anything. The name is
    checked where a gate reads it (:func:`fp8lab.specs.nan.held_nan_policy`).
    ``encode(y)`` is ``func(y, 1.0)``: ``y * float32(1/1.0) == y`` bit for
    bit, so a correct kernel encodes y unchanged.
    """

    name: str
    func: QuantizeFn
    nan_policy: str | None = None

    def __post_init__(self) -> None:
        if self.nan_policy is None:  # the function's own declaration, passed on unread
            object.__setattr__(self, "nan_policy", getattr(self.func, "nan_policy", None))

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Call the wrapped function."""
        return self.func(x, scale)

    def encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        """Quantize with scale 1.0."""
        return self.func(y, np.float32(1.0))
