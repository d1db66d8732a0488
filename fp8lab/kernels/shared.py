"""Kernels in shared libraries, through fp8lab's C ABI (``fp8lab/abi/fp8lab_kernel.h``).

``load_shared(path, symbol, kind)`` opens a library with ctypes and wraps the
named symbol as a :class:`~fp8lab.kernels.protocol.QuantKernel` (``kind="quant"``,
``fp8lab_quant``'s signature), a :class:`~fp8lab.gemm.protocol.MatmulKernel`
(``kind="matmul"``, ``fp8lab_matmul``'s signature) or a GQ kernel
(``kind="scheme"``, :mod:`fp8lab.kernels.shared_scheme`). The symbol's name is the
user's; the signature is the ABI's. A non-zero return raises
:class:`SharedKernelError`, which a gate files as a FAIL of that case.

The library runs in this process. ``fp8lab gates`` calls a user's kernel only
in a child process (:mod:`fp8lab.cli.gate_child`), so a segfault or abort there
becomes a FAIL naming the signal; from Python, run foreign code the same way.

The ABI takes one float32 scale. G1's shard case hands a kernel its
per-shard scales; the wrapper collapses them with
:func:`~fp8lab.kernels.scale.collapse_shard_scales` (the max) before the
call, so a library is checked at the collapsed scale there.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.gemm.protocol import VLLM_CPP_SPEC, MatmulSpec
from fp8lab.kernels.nan_policy import DEFAULT_NAN_POLICY, NAN_POLICIES
from fp8lab.kernels.scale import collapse_shard_scales

if TYPE_CHECKING:
    from fp8lab.kernels.shared_scheme import SharedSchemeKernel

__all__ = [
    "ABI_HEADER",
    "SHARED_SUFFIXES",
    "X_DTYPES",
    "SharedKernelError",
    "SharedMatmulKernel",
    "SharedQuantKernel",
    "call_shared",
    "is_shared_spec",
    "load_shared",
    "shared_function",
    "split_shared_spec",
]

ABI_HEADER = Path(__file__).resolve().parents[1] / "abi" / "fp8lab_kernel.h"
SHARED_SUFFIXES = (".so", ".dylib", ".dll")
# the ABI's x_dtype codes (fp8lab_kernel.h FP8LAB_X_FLOAT32, FP8LAB_X_BFLOAT16)
X_DTYPES = {np.dtype(np.float32): 0, np.dtype(ml_dtypes.bfloat16): 1}
_OUT_DTYPES = {"f32": (0, np.dtype(np.float32)), "bf16": (1, np.dtype(ml_dtypes.bfloat16))}
_I64, _I32, _F32, _P = ctypes.c_int64, ctypes.c_int32, ctypes.c_float, ctypes.c_void_p
_SIGNATURES = {
    "quant": [_P, _I32, _I64, _F32, _P],
    "matmul": [_P, _P, _I64, _I64, _I64, _F32, _F32, _I32, _P],
    "scheme": [_P, _I32, _I64, _I64, _P, _P],  # fp8lab_scheme_quant
    "nvfp4": [_P, _I32, _I64, _I64, _F32, _P, _P],  # fp8lab_nvfp4_quant
}


class SharedKernelError(RuntimeError):
    """A shared-library kernel returned a non-zero status (a kernel error)."""


def is_shared_spec(spec: str) -> bool:
    """``PATH:SYMBOL`` whose PATH names a shared library (by its suffix)."""
    path = spec.rpartition(":")[0]
    name = Path(path).name
    return bool(path) and (name.endswith(SHARED_SUFFIXES) or ".so." in name)


def split_shared_spec(spec: str) -> tuple[str, str]:
    """``PATH:SYMBOL`` -> (PATH, SYMBOL); the last colon splits.

    Raises:
        ValueError: if either part is empty.
    """
    path, _, symbol = spec.rpartition(":")
    if not path or not symbol:
        raise ValueError(f"{spec!r} is not of the form path/lib.so:symbol")
    return path, symbol


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


def call_shared(function: Any, symbol: str, *args: Any) -> None:
    """Call ``function``; a non-zero return raises :class:`SharedKernelError`."""
    status = int(function(*args))
    if status != 0:
        raise SharedKernelError(f"{symbol} returned {status}")


@dataclass(frozen=True)
class SharedQuantKernel:
    """``fp8lab_quant`` from a shared library as a :class:`QuantKernel`."""

    name: str
    path: str
    symbol: str
    nan_policy: str = DEFAULT_NAN_POLICY
    _function: Any = field(default=None, repr=False, compare=False)

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """Codes for float32 or bfloat16 ``x`` under ``scale`` (shards collapsed).

        Raises:
            ValueError: for an input dtype the ABI does not carry.
            SharedKernelError: for a non-zero return.
        """
        arr = np.asarray(x)
        if arr.dtype not in X_DTYPES:
            raise ValueError(f"the C ABI takes float32 or bfloat16 input, not {arr.dtype}")
        if np.ndim(scale):
            scale = collapse_shard_scales(list(np.asarray(scale, np.float32).ravel()))
        private = np.array(arr, order="C", copy=True)  # the library gets its own copy
        out = np.zeros(private.shape, np.uint8)
        with np.errstate(all="ignore"):
            s = np.float32(scale)
        call_shared(
            self._function or shared_function(self.path, self.symbol, "quant"),
            self.symbol,
            private.ctypes.data,
            X_DTYPES[arr.dtype],
            private.size,
            float(s),
            out.ctypes.data,
        )
        return out


@dataclass(frozen=True)
class SharedMatmulKernel:
    """``fp8lab_matmul`` from a shared library as a :class:`MatmulKernel`."""

    name: str
    path: str
    symbol: str
    spec: MatmulSpec = VLLM_CPP_SPEC
    _function: Any = field(default=None, repr=False, compare=False)

    def matmul(
        self, a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
    ) -> np.ndarray:
        """[M,N] float32 or bfloat16 from [M,K] and [N,K] e4m3fn codes.

        Raises:
            ValueError: for arguments outside the ABI (dtype, shape, output dtype).
            SharedKernelError: for a non-zero return.
        """
        a, b = (np.array(v, order="C", copy=True) for v in (a_codes, b_codes))
        if a.dtype != np.uint8 or b.dtype != np.uint8 or a.ndim != 2 or b.ndim != 2:
            raise ValueError("the C ABI takes 2-D uint8 operands")
        if a.shape[1] != b.shape[1] or out_dtype not in _OUT_DTYPES:
            raise ValueError(f"shapes {a.shape}, {b.shape} or out_dtype {out_dtype!r} not valid")
        code, dtype = _OUT_DTYPES[out_dtype]
        out = np.zeros((a.shape[0], b.shape[0]), dtype)
        with np.errstate(all="ignore"):
            si, sw = np.float32(s_in), np.float32(s_w)
        function = self._function or shared_function(self.path, self.symbol, "matmul")
        m, k = a.shape
        call_shared(function, self.symbol, a.ctypes.data, b.ctypes.data, m, b.shape[0], k,
              float(si), float(sw), code, out.ctypes.data)  # fmt: skip
        return out


def load_shared(
    path: str | Path,
    symbol: str,
    kind: Literal["quant", "matmul", "scheme"] = "quant",
    *,
    nan_policy: str | None = None,
    spec: MatmulSpec = VLLM_CPP_SPEC,
    scheme: str | None = None,
) -> SharedQuantKernel | SharedMatmulKernel | SharedSchemeKernel:
    """Load ``symbol`` from the library at ``path`` as a kernel of ``kind``.

    Args:
        path: the library file.
        symbol: the exported function (any name; ``extern "C"`` in C++).
        kind: ``"quant"`` (``fp8lab_quant``'s signature), ``"matmul"``, or
            ``"scheme"`` (a GQ kernel: ``fp8lab_scheme_quant``'s signature, or
            ``fp8lab_nvfp4_quant``'s for scheme nvfp4).
        nan_policy: a quant kernel's NaN policy by name (default vllm.cpp's).
        spec: the model a matmul kernel claims for G3 (default vllm.cpp's).
        scheme: for ``kind="scheme"``, the GQ scheme the library computes.

    Returns:
        A :class:`SharedQuantKernel`, :class:`SharedMatmulKernel` or
        :class:`~fp8lab.kernels.shared_scheme.SharedSchemeKernel`.

    Raises:
        ValueError: one line, for a missing file or symbol, a library that
            cannot be loaded, an unknown kind, NaN policy or scheme.
    """
    if kind not in ("quant", "matmul", "scheme"):
        raise ValueError(f"kind must be 'quant', 'matmul' or 'scheme', not {kind!r}")
    name = f"{Path(path).name}:{symbol}"
    if kind == "scheme":
        from fp8lab.kernels.shared_scheme import SharedSchemeKernel, scheme_signature

        if scheme is None:
            raise ValueError("kind='scheme' needs the scheme the library computes")
        function = shared_function(str(path), symbol, scheme_signature(scheme))
        return SharedSchemeKernel(name, str(path), symbol, scheme, function)
    function = shared_function(str(path), symbol, kind)
    if kind == "matmul":
        return SharedMatmulKernel(name, str(path), symbol, spec, function)
    policy = DEFAULT_NAN_POLICY if nan_policy is None else nan_policy
    if policy not in NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {policy!r}; known: {sorted(NAN_POLICIES)}")
    return SharedQuantKernel(name, str(path), symbol, policy, function)
