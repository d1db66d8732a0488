"""Triton kernels on the CPU: Triton's interpreter, with the hardware's float8 conversion.

Triton's interpreter (``TRITON_INTERPRET=1``) runs ``@triton.jit`` kernels
with numpy, but its own float8 conversion is not the GPU's: it rounds the
significand without carrying into the exponent, so with triton 3.9,
``tl.float8e4nv`` of 1.9375 is 1.0 where the hardware gives 2.0 (fp8lab
counts every input it gets wrong over all 2^32: ``stock_e4m3fn`` below, in
``fp8lab exhaustive``). :func:`use_hardware_float8` replaces the
interpreter's conversions to and from ``tl.float8e4nv`` (e4m3fn) and
``tl.float8e5`` (e5m2) with fp8lab's exact codec, following PTX
``cvt.rn.satfinite``: round to nearest even on the exact value, a finite
overflow or an infinity saturates to the largest finite value of its sign,
and NaN gives 0x7F in both formats (the code an H200 gives, with the sign
dropped: ``scripts/gpu-check`` compares Triton's compiled conversion with
this one on all 2^32 inputs). Other conversions stay the interpreter's.

One difference it does not remove: Triton compiles ``/`` on float32 to
``div.full.f32``, an approximation (within 2 ulp) whose bits no specification
fixes, where the interpreter divides exactly (IEEE). A kernel that divides
float32 with ``/`` is told so on stderr, once: on a GPU its quotients can
differ from these by an ulp (``tl.math.div_rn`` is the IEEE division).

``--arrays triton`` selects this for a kernel: its process sets
``TRITON_INTERPRET=1`` and installs the conversion before it imports the
kernel's module (``@triton.jit`` reads the variable when it decorates), then
calls the kernel with torch tensors on the CPU (:mod:`.torch_arrays`). With
``--device cuda`` the kernel runs compiled, on the GPU, unchanged.

``hardware_e4m3fn`` and ``stock_e4m3fn`` (and the e5m2 pair) are encoders for
``fp8lab exhaustive``: each converts float32 inputs through the
interpreter's builder, the replaced or the stock conversion. triton is
imported only here, only when asked for.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode, encode

__all__ = [
    "DIVISION_NOTE",
    "HARDWARE_NAN",
    "hardware_codes",
    "hardware_e4m3fn",
    "hardware_e5m2",
    "prepare_interpreter",
    "stock_e4m3fn",
    "stock_e5m2",
    "triton_version",
    "use_hardware_float8",
]

_INSTALLED: dict[str, Any] = {}


def _triton() -> tuple[Any, Any]:
    try:
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        raise ValueError("--arrays triton needs triton: pip install 'fp8lab[triton]'") from None
    return tl, interpreter


def triton_version() -> str:
    """The installed triton's version.

    Raises:
        ValueError: if triton is not installed.
    """
    _triton()
    import triton

    return str(triton.__version__)


def _formats(tl: Any) -> dict[Any, str]:
    return {tl.float8e4nv: "e4m3fn", tl.float8e5: "e5m2"}


HARDWARE_NAN = 0x7F  # cvt.rn.satfinite's NaN for e4m3x2 and e5m2x2 alike, sign dropped
DIVISION_NOTE = (
    "fp8lab: this Triton kernel divides float32 with '/', which NVIDIA GPUs run as "
    "div.full.f32 (approximate, within 2 ulp); here it divides exactly, so a quotient can "
    "differ from the GPU's by an ulp (tl.math.div_rn is the exact division)"
)


def hardware_codes(values: np.ndarray, fmt: str) -> npt.NDArray[np.uint8]:
    """float32 ``values`` as ``cvt.rn.satfinite`` converts them: RNE, saturating, NaN 0x7F."""
    codes = encode(values, fmt, saturate=True, nan="canonical")
    codes[np.isnan(values)] = HARDWARE_NAN
    return codes


def _as_float32(data: np.ndarray, dtype: Any, tl: Any) -> np.ndarray | None:
    """The interpreter's float data as float32, exactly; None for a type not handled."""
    if dtype == tl.float32:
        return np.asarray(data, np.float32)
    if dtype == tl.float16:
        return np.asarray(data, np.float16).astype(np.float32)
    if dtype == tl.bfloat16:  # stored as uint16: the top half of a float32
        return (np.asarray(data, np.uint16).astype(np.uint32) << 16).view(np.float32)
    return None


def _from_float32(values: np.ndarray, dtype: Any, tl: Any) -> np.ndarray | None:
    """float32 ``values`` (decoded fp8: exact in each target) stored as the interpreter does."""
    if dtype == tl.float32:
        return values.astype(np.float32)
    if dtype == tl.float16:
        return values.astype(np.float16)  # every e4m3fn and e5m2 value is a float16
    if dtype == tl.bfloat16:  # every e4m3fn and e5m2 value is a bfloat16 too: exact
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return None


def use_hardware_float8() -> None:
    """Replace the interpreter's float8 conversions with fp8lab's codec (idempotent).

    Raises:
        ValueError: if triton is not installed.
    """
    tl, interpreter = _triton()
    builder = interpreter.InterpreterBuilder
    if "create_fp_to_fp" in _INSTALLED:
        return
    stock = builder.create_fp_to_fp
    fmts = _formats(tl)

    def create_fp_to_fp(self: Any, src: Any, dst_type: Any, rounding_mode: Any) -> Any:
        src_ty, dst_ty = src.dtype.scalar, dst_type.scalar
        if dst_ty in fmts and rounding_mode in (None, interpreter._ir.ROUNDING_MODE.RTNE):
            values = _as_float32(src.data, src_ty, tl)
            if values is not None:
                codes = hardware_codes(values, fmts[dst_ty])
                return interpreter.TensorHandle(codes.reshape(np.shape(src.data)), dst_ty)
        if src_ty in fmts:
            decoded = decode(np.asarray(src.data, np.uint8), fmts[src_ty], dtype=np.float32)
            data = _from_float32(decoded, dst_ty, tl)
            if data is not None:
                return interpreter.TensorHandle(data.reshape(np.shape(src.data)), dst_ty)
        return stock(self, src, dst_type, rounding_mode)

    divide = builder.create_fdiv

    def create_fdiv(self: Any, lhs: Any, rhs: Any) -> Any:
        if lhs.dtype.scalar == tl.float32 and "told" not in _INSTALLED:
            _INSTALLED["told"] = True
            print(DIVISION_NOTE, file=sys.stderr, flush=True)
        return divide(self, lhs, rhs)

    builder.create_fp_to_fp = create_fp_to_fp
    builder.create_fdiv = create_fdiv
    _INSTALLED["create_fp_to_fp"] = stock


def prepare_interpreter(device: str) -> None:
    """Before a Triton kernel's module is imported: on a CPU, the interpreter, hardware float8.

    On ``cuda`` nothing changes: the kernel is compiled for the GPU.
    """
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        use_hardware_float8()
        # numpy's "invalid value" warnings for NaN lanes: the GPU computes them silently
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\.runtime\.")


def _convert(x: np.ndarray, fmt: str, replaced: bool) -> np.ndarray:
    tl, interpreter = _triton()
    if replaced:
        use_hardware_float8()
    method = interpreter.InterpreterBuilder.create_fp_to_fp
    if not replaced:
        method = _INSTALLED.get("create_fp_to_fp", method)
    dst = {"e4m3fn": tl.float8e4nv, "e5m2": tl.float8e5}[fmt]
    src = interpreter.TensorHandle(np.ascontiguousarray(x, np.float32), tl.float32)
    out = method(None, src, dst, interpreter._ir.ROUNDING_MODE.RTNE)
    return np.asarray(out.data, np.uint8).reshape(np.shape(x))


def hardware_e4m3fn(x: np.ndarray) -> np.ndarray:
    """float32 -> e4m3fn codes through the interpreter's builder, the conversion replaced."""
    return _convert(x, "e4m3fn", replaced=True)


def hardware_e5m2(x: np.ndarray) -> np.ndarray:
    """float32 -> e5m2 codes through the interpreter's builder, the conversion replaced."""
    return _convert(x, "e5m2", replaced=True)


def stock_e4m3fn(x: np.ndarray) -> np.ndarray:
    """float32 -> e4m3fn codes through the interpreter's own conversion (not the hardware's)."""
    return _convert(x, "e4m3fn", replaced=False)


def stock_e5m2(x: np.ndarray) -> np.ndarray:
    """float32 -> e5m2 codes through the interpreter's own conversion (not the hardware's)."""
    return _convert(x, "e5m2", replaced=False)
