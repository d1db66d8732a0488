"""Public encode / decode (fp8lab.encode, fp8lab.decode)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.inputs import as_code_array, as_encodable_array
from fp8lab.codecs.policy import SpecialCodes, codec_nan_policy, special_codes
from fp8lab.codecs.rne_array import encode_float32, encode_float64
from fp8lab.codecs.rne_bits import bits_available, bits_params, encode_float32_bits_rne
from fp8lab.codecs.rne_scalar import encode_scalars
from fp8lab.codecs.table import (
    ENGINES as TABLE_ENGINES,
)
from fp8lab.codecs.table import (
    encode_bfloat16_bits,
    encode_float32_bits,
    float32_table,
)
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import ml_dtypes_type
from fp8lab.specs.formats import get_format
from fp8lab.specs.nan import NanPolicy

__all__ = ["ENGINES", "METHODS", "as_ml_dtypes", "decode", "decode_table", "encode"]

METHODS = ("fast", "array", "scalar")
# engines of method="fast", the default first: the bit-field kernel, then the table lookups
ENGINES = (("bits",) if bits_available() else ()) + TABLE_ENGINES
_ARRAY_BLOCK = 1 << 16  # elements per block of the array twin: a few MiB of temporaries


def encode(
    x: Any,
    fmt: str | FormatSpec = "e4m3fn",
    *,
    saturate: bool = True,
    nan: str | NanPolicy = "canonical",
    method: str = "fast",
    engine: str = ENGINES[0],
) -> npt.NDArray[np.uint8]:
    """Encode floats to fp8 codes with round-to-nearest-even (OFP8 §4.2).

    Args:
        x: float32, float64, bfloat16 or float16 array; float64 is rounded once.
        fmt: format name or spec.
        saturate: True is SATFINITE (overflow and ±inf to ±max); False sends
            overflow to inf or NaN, as the format defines.
        nan: ``"canonical"`` (every NaN code positive) or ``"keep-sign"``.
        method: ``"fast"`` (float32 path), ``"array"`` (the bit-field
            twin) or ``"scalar"`` (exact Fraction twin); all agree bit for bit.
        engine: engine of ``method="fast"``: ``"bits"`` (the default where numba
            is installed: branch-free RNE on the float32 bits, compiled per format
            and policy on first use and cached, :mod:`fp8lab.codecs.rne_bits`), or
            ``"numba"`` / ``"numpy"`` (a table lookup); checked whatever the
            method and dtype.

    Returns:
        uint8 codes with the shape of ``x`` (a 0-d input gives a 0-d array);
        view them with :func:`as_ml_dtypes`. float64 input is encoded in blocks
        of 2**16 elements, so extra memory does not grow with the input.

    Raises:
        TypeError: for a dtype that is not a float type listed above.
        ValueError: for an unknown format, NaN policy, method or engine; for
            NaN input to a format without NaN codes, or ``saturate=False``
            for a format with neither inf nor NaN (:mod:`fp8lab.codecs.policy`).
    """
    spec = get_format(fmt)
    policy = codec_nan_policy(nan)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r} not available; choose from {ENGINES}")
    codes = special_codes(spec, saturate=saturate, nan=policy)
    arr = as_encodable_array(x)
    if not spec.nan_codes and _has_nan(arr):
        raise ValueError(f"{spec.name} has no NaN code: NaN input cannot be encoded")
    if method == "scalar":
        out = encode_scalars(arr, spec, codes)
    elif method == "array" or arr.dtype == np.float64:
        out = _encode_array_blocks(arr, spec, codes)
    elif engine == "bits":
        if arr.dtype == np.float32 or arr.dtype == np.float16:
            wide_bits = arr.astype(np.float32, copy=False).view(np.uint32)
        else:  # bfloat16 is a float32 whose low 16 bits are zero
            wide_bits = arr.view(np.uint16).astype(np.uint32) << np.uint32(16)
        out = encode_float32_bits_rne(wide_bits, bits_params(spec, codes))
    elif arr.dtype == np.float32 or arr.dtype == np.float16:
        table = float32_table(spec, saturate, policy)
        wide = arr.astype(np.float32, copy=False)
        out = encode_float32_bits(wide.view(np.uint32), table, engine)
    else:
        table = float32_table(spec, saturate, policy)
        out = encode_bfloat16_bits(arr.view(np.uint16), table)
    return np.asarray(out, np.uint8).reshape(arr.shape)  # a 0-d input stays a 0-d array


def _has_nan(arr: np.ndarray) -> bool:
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        if arr.size and arr.dtype.kind == "f":  # numpy's max is NaN where any element is
            return bool(np.isnan(arr.max()))
        return bool(np.isnan(arr).any())


def _encode_array_blocks(
    arr: np.ndarray, spec: FormatSpec, codes: SpecialCodes
) -> npt.NDArray[np.uint8]:
    """The array twin block by block, so extra memory is O(block), not O(size).

    float64 input is rounded from float64 bits (:func:`encode_float64`); any other
    float is widened exactly to float32 and rounded from its bits (:func:`encode_float32`).
    """
    wide, twin = (
        (np.float64, encode_float64) if arr.dtype == np.float64 else (np.float32, encode_float32)
    )
    flat = arr.reshape(-1)  # a view: ``arr`` is C-contiguous
    out = np.empty(flat.size, np.uint8)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        for lo in range(0, flat.size, _ARRAY_BLOCK):
            block = flat[lo : lo + _ARRAY_BLOCK].astype(wide, copy=False)
            out[lo : lo + block.size] = twin(np.ascontiguousarray(block), spec, codes)
    return out


@cache
def decode_table(fmt: FormatSpec) -> npt.NDArray[np.float64]:
    """The exact float64 value of every one of ``fmt.code_count`` codes; read-only."""
    values = np.empty(fmt.code_count, np.float64)
    for code in range(fmt.code_count):
        magnitude = code & fmt.magnitude_mask
        if fmt.is_nan_code(code):  # the NaN keeps the code's sign bit, as ml_dtypes does
            values[code] = -np.nan if code & fmt.sign_bit else np.nan
        elif fmt.inf_code is not None and magnitude == fmt.inf_code:
            values[code] = -np.inf if code & fmt.sign_bit else np.inf
        else:
            values[code] = float(fmt.exact_value(code))
            if code == fmt.sign_bit and fmt.has_negative_zero:
                values[code] = -0.0
    values.setflags(write=False)
    return values


def decode(
    codes: Any, fmt: str | FormatSpec = "e4m3fn", dtype: npt.DTypeLike = np.float32
) -> np.ndarray:
    """Decode codes to exact float32 or float64 values (OFP8 §5.2).

    Raises:
        TypeError: for codes that are not uint8 (or the format's ml_dtypes
            array), or a ``dtype`` other than float32 / float64.
        ValueError: for a code at or above ``2**fmt.bits`` (fp4 and fp6 keep
            one code per byte, in the low bits).
    """
    spec = get_format(fmt)
    out_dtype = np.dtype(dtype)
    if out_dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"decode dtype must be float32 or float64, got {out_dtype}")
    arr = as_code_array(codes, spec)
    if arr.size and int(arr.max()) >= spec.code_count:
        raise ValueError(f"{spec.name} codes are below {spec.code_count}, got {int(arr.max())}")
    return decode_table(spec)[arr].astype(out_dtype)


def as_ml_dtypes(codes: Any, fmt: str | FormatSpec = "e4m3fn") -> np.ndarray:
    """View uint8 codes as the matching ``ml_dtypes`` array (no copy)."""
    spec = get_format(fmt)
    return as_code_array(codes, spec).view(ml_dtypes_type(spec))
