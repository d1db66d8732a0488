"""GQ kernels in shared libraries: ``fp8lab_scheme_quant`` and ``fp8lab_nvfp4_quant``.

:class:`SharedSchemeKernel` wraps a symbol with one of the two GQ signatures of
``fp8lab/abi/fp8lab_kernel.h`` as GQ's ``FUNC(x) -> (codes, scales)`` (nvfp4:
``FUNC(x, global_scale)``). The library cannot say which scheme it computes;
the caller names it, and the scheme fixes the scales' dtype and shape
(:data:`fp8lab.specs.scheme_layout.SCHEME_LAYOUTS`). Each call runs the library twice
on private copies, its outputs pre-filled with 0x00 and then 0xFF bytes: outputs that differ
(an element left unwritten, or a kernel that is not deterministic) raise
:class:`~fp8lab.kernels.sources.shared_abi.SharedKernelError`, as a non-zero return does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels.sources.shared_abi import (
    X_DTYPES,
    call_shared,
    shared_function,
    written_twice,
)
from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS, scales_dtype, scales_shape

__all__ = ["SharedSchemeKernel", "scheme_signature"]


def scheme_signature(scheme: str) -> str:
    """The ABI signature ``scheme`` uses: "nvfp4" or "scheme".

    Raises:
        ValueError: for an unknown scheme.
    """
    if scheme not in SCHEME_LAYOUTS:
        raise ValueError(f"unknown scheme {scheme!r}; choose from {', '.join(SCHEME_LAYOUTS)}")
    return "nvfp4" if scheme == "nvfp4" else "scheme"


@dataclass(frozen=True)
class SharedSchemeKernel:
    """A GQ kernel from a shared library, for the scheme the caller names."""

    name: str
    path: str
    symbol: str
    scheme: str
    _function: Any = field(default=None, repr=False, compare=False)

    def _once(
        self, x: np.ndarray, fill: int, extra: tuple[Any, ...]
    ) -> tuple[npt.NDArray[np.uint8], np.ndarray]:
        m, k = x.shape
        private = np.array(x, order="C", copy=True)  # the library gets its own copy
        codes = np.full((m, k), fill, np.uint8)
        scales = np.full(scales_shape(self.scheme, m, k), 0, scales_dtype(self.scheme))
        scales.view(np.uint8)[...] = fill
        function = self._function or shared_function(
            self.path, self.symbol, scheme_signature(self.scheme)
        )
        head = (private.ctypes.data, X_DTYPES[x.dtype], m, k)
        call_shared(function, self.symbol, *head, *extra, codes.ctypes.data, scales.ctypes.data)
        return codes, scales

    def __call__(self, x: np.ndarray, *global_scale: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, scales)`` for float32 or bfloat16 ``x`` [M, K] (nvfp4: and a global amax).

        Raises:
            ValueError: for an input the ABI does not carry (dtype, rank, argument count).
            SharedKernelError: for a non-zero return, or outputs that depend on their fill.
        """
        arr = np.asarray(x)
        if arr.dtype not in X_DTYPES or arr.ndim != 2:
            raise ValueError(f"the C ABI takes float32 or bfloat16 [M, K], not {arr.dtype}")
        want = 1 if self.scheme == "nvfp4" else 0
        if len(global_scale) != want:
            raise ValueError(f"{self.scheme} takes {want} argument(s) after x")
        extra: tuple[Any, ...] = ()
        if want:
            with np.errstate(all="ignore"):
                extra = (float(np.float32(np.asarray(global_scale[0]).reshape(-1)[0])),)
        codes, scales = written_twice(
            self.symbol, ("codes", "scales"), lambda fill: self._once(arr, fill, extra)
        )
        return codes, scales
