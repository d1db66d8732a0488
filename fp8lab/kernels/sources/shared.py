"""Kernels in shared libraries, through fp8lab's C ABI (``fp8lab/abi/fp8lab_kernel.h``).

``load_shared(path, symbol, kind)`` opens a library with ctypes and wraps the
named symbol as a :class:`~fp8lab.kernels.protocols.QuantKernel` (``kind="quant"``,
``fp8lab_quant``'s signature), a :class:`~fp8lab.kernels.matmul_protocol.MatmulKernel`
(``kind="matmul"``, ``fp8lab_matmul``'s signature) or a GQ kernel
(``kind="scheme"``, :mod:`fp8lab.kernels.sources.shared_scheme`). The symbol's name is the
user's; the signature is the ABI's. A non-zero return raises
:class:`SharedKernelError`, which a gate files as a FAIL of that case.

Each call runs the library twice on private copies of its inputs, its
output buffer filled with 0x00 bytes and then 0xFF bytes: an output byte
the library left unwritten (or a library that is not deterministic) differs
between the two and raises :class:`SharedKernelError`, a FAIL of that case
(:func:`~fp8lab.kernels.sources.shared_abi.written_twice`).

The library runs in this process. ``fp8lab gates`` calls a user's kernel only
in a child process (:mod:`fp8lab.kernels.sources.isolated`), so a segfault or abort there
becomes a FAIL naming the signal; from Python, run foreign code the same way.

The ABI takes one float32 scale. G1's shard case hands a kernel its
per-shard scales; the wrapper collapses them with
:func:`~fp8lab.kernels.scale.collapse_shard_scales` (the max) before the
call, so a library is checked at the collapsed scale there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from fp8lab.kernels.matmul_protocol import VLLM_CPP_SPEC, MatmulSpec
from fp8lab.kernels.scale import collapse_shard_scales
from fp8lab.kernels.sources.shared_abi import (
    OUT_DTYPE_CODES,
    X_DTYPES,
    call_shared,
    shared_function,
    written_twice,
)
from fp8lab.kernels.sources.shared_scheme import SharedSchemeKernel, scheme_signature
from fp8lab.specs.nan import NAN_POLICIES

__all__ = ["SharedMatmulKernel", "SharedQuantKernel", "load_shared"]


@dataclass(frozen=True)
class SharedQuantKernel:
    """``fp8lab_quant`` from a shared library as a :class:`QuantKernel`.

    ``nan_policy`` is the one stated for it; None: none stated (held to canonical).
    """

    name: str
    path: str
    symbol: str
    nan_policy: str | None = None
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
        with np.errstate(all="ignore"):
            s = np.float32(scale)
        function = self._function or shared_function(self.path, self.symbol, "quant")

        def once(fill: int) -> tuple[np.ndarray, ...]:
            private = np.array(arr, order="C", copy=True)  # the library gets its own copy
            out = np.full(private.shape, fill, np.uint8)
            call_shared(function, self.symbol, private.ctypes.data, X_DTYPES[arr.dtype],
                        private.size, float(s), out.ctypes.data)  # fmt: skip
            return (out,)

        return written_twice(self.symbol, ("codes",), once)[0]


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
        a0, b0 = np.asarray(a_codes), np.asarray(b_codes)
        if a0.dtype != np.uint8 or b0.dtype != np.uint8 or a0.ndim != 2 or b0.ndim != 2:
            raise ValueError("the C ABI takes 2-D uint8 operands")
        if a0.shape[1] != b0.shape[1] or out_dtype not in OUT_DTYPE_CODES:
            raise ValueError(f"shapes {a0.shape}, {b0.shape} or out_dtype {out_dtype!r} not valid")
        code, dtype = OUT_DTYPE_CODES[out_dtype]
        with np.errstate(all="ignore"):
            si, sw = np.float32(s_in), np.float32(s_w)
        function = self._function or shared_function(self.path, self.symbol, "matmul")
        (m, k), n = a0.shape, b0.shape[0]

        def once(fill: int) -> tuple[np.ndarray, ...]:
            a, b = (np.array(v, order="C", copy=True) for v in (a0, b0))  # private copies
            out = np.empty((m, n), dtype)
            out.view(np.uint8)[...] = fill
            call_shared(function, self.symbol, a.ctypes.data, b.ctypes.data, m, n, k,
                        float(si), float(sw), code, out.ctypes.data)  # fmt: skip
            return (out,)

        return written_twice(self.symbol, ("the output",), once)[0]


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
        nan_policy: a quant kernel's NaN policy by name (None: none stated; a gate
            holds it to canonical).
        spec: the model a matmul kernel claims for G3 (default vllm.cpp's).
        scheme: for ``kind="scheme"``, the GQ scheme the library computes.

    Returns:
        A :class:`SharedQuantKernel`, :class:`SharedMatmulKernel` or
        :class:`~fp8lab.kernels.sources.shared_scheme.SharedSchemeKernel`.

    Raises:
        ValueError: one line, for a missing file or symbol, a library that
            cannot be loaded, an unknown kind, NaN policy or scheme.
    """
    if kind not in ("quant", "matmul", "scheme"):
        raise ValueError(f"kind must be 'quant', 'matmul' or 'scheme', not {kind!r}")
    name = f"{Path(path).name}:{symbol}"
    if kind == "scheme":
        if scheme is None:
            raise ValueError("kind='scheme' needs the scheme the library computes")
        function = shared_function(str(path), symbol, scheme_signature(scheme))
        return SharedSchemeKernel(name, str(path), symbol, scheme, function)
    function = shared_function(str(path), symbol, kind)
    if kind == "matmul":
        return SharedMatmulKernel(name, str(path), symbol, spec, function)
    if nan_policy is not None and nan_policy not in NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {nan_policy!r}; known: {sorted(NAN_POLICIES)}")
    return SharedQuantKernel(name, str(path), symbol, nan_policy, function)
