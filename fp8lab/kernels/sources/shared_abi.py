"""fp8lab's C ABI from ctypes: the header, the signatures, and one typed call.

The ABI is ``fp8lab/abi/fp8lab_kernel.h``; the kernel wrappers of
:mod:`fp8lab.kernels.sources.shared` and
:mod:`fp8lab.kernels.sources.shared_scheme` call through these.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.kernels.sources.shared_source import (
    SHARED_SUFFIXES,
    is_shared_source,
    split_shared_source,
)

__all__ = [
    "ABI_HEADER",
    "SHARED_SUFFIXES",
    "OUT_DTYPE_CODES",
    "X_DTYPES",
    "FILLS",
    "SharedKernelError",
    "call_shared",
    "is_shared_source",
    "shared_function",
    "split_shared_source",
]

ABI_HEADER = Path(__file__).resolve().parents[2] / "abi" / "fp8lab_kernel.h"
# the ABI's x_dtype codes (fp8lab_kernel.h FP8LAB_X_FLOAT32, FP8LAB_X_BFLOAT16)
X_DTYPES = {np.dtype(np.float32): 0, np.dtype(ml_dtypes.bfloat16): 1}
OUT_DTYPE_CODES = {"f32": (0, np.dtype(np.float32)), "bf16": (1, np.dtype(ml_dtypes.bfloat16))}
_I64, _I32, _F32, _P = ctypes.c_int64, ctypes.c_int32, ctypes.c_float, ctypes.c_void_p
_SIGNATURES = {
    "quant": [_P, _I32, _I64, _F32, _P],
    "matmul": [_P, _P, _I64, _I64, _I64, _F32, _F32, _I32, _P],
    "scheme": [_P, _I32, _I64, _I64, _P, _P],  # fp8lab_scheme_quant
    "nvfp4": [_P, _I32, _I64, _I64, _F32, _P, _P],  # fp8lab_nvfp4_quant
}


class SharedKernelError(RuntimeError):
    """A shared-library kernel returned a non-zero status (a kernel error)."""


@cache
def shared_function(path: str, symbol: str, kind: str) -> Any:
    """The ctypes function, typed by the ABI signature ``kind``; one handle per triple.

    Raises:
        ValueError: one line, for a missing file or symbol or a library that cannot be loaded.
    """
    if not Path(path).is_file():
        raise ValueError(f"shared library {path!r}: no such file")
    try:
        library = ctypes.CDLL(str(Path(path).resolve()))
    except OSError as exc:
        raise ValueError(f"shared library {path!r} cannot be loaded: {exc}") from None
    try:
        function = getattr(library, symbol)
    except AttributeError:
        raise ValueError(f"shared library {path!r} has no symbol {symbol!r}") from None
    function.restype = ctypes.c_int32
    function.argtypes = _SIGNATURES[kind]
    return function


FILLS = (0x00, 0xFF)  # the two fills of an output buffer: a byte the kernel leaves keeps one


def written_twice(
    symbol: str, names: tuple[str, ...], once: Callable[[int], tuple[np.ndarray, ...]]
) -> tuple[np.ndarray, ...]:
    """The outputs of ``once(fill)`` for both :data:`FILLS`, when every byte is the same.

    ``once`` calls the library on private copies of the inputs, its output
    buffers filled with ``fill`` bytes. A byte the kernel did not write keeps
    its fill, so it differs between the two calls (as does a kernel that is
    not deterministic).

    Raises:
        SharedKernelError: naming the output and how many of its bytes differ.
    """
    first, second = once(FILLS[0]), once(FILLS[1])
    for what, a, b in zip(names, first, second, strict=True):
        left = np.count_nonzero(a.view(np.uint8) != b.view(np.uint8))
        if left:
            raise SharedKernelError(
                f"{symbol} left {what} unwritten ({left:,} of {a.nbytes:,} bytes) or is not "
                "deterministic (they differ between calls with 0x00- and 0xFF-filled buffers)"
            )
    return first


def call_shared(function: Any, symbol: str, *args: Any) -> None:
    """Call ``function``; a non-zero return raises :class:`SharedKernelError`."""
    status = int(function(*args))
    if status != 0:
        raise SharedKernelError(f"{symbol} returned {status}")
