"""One GQ kernel call checked against its reference, and its offenders as hex."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from fp8lab.gates.compare import CodeComparison, as_codes, compare_codes
from fp8lab.gates.records import CaseResult, Offender
from fp8lab.kernels.sources.wire import type_name
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format


def outputs_as_codes(got: object, elem: FormatSpec, scale_format: str) -> object:
    """A ``(codes, scales)`` answer with float8 arrays of the formats as their bytes.

    Raises:
        ValueError: for a float8 array of another format (one line naming both).
    """
    if not isinstance(got, tuple) or len(got) != 2:
        return got
    scales = got[1]
    if scale_format != "float32":
        scales = as_codes(scales, get_format(scale_format))
    return as_codes(got[0], elem), scales


def _malformed(got: object, want_codes: np.ndarray, want_scales: np.ndarray) -> str:
    if not isinstance(got, tuple) or len(got) != 2:
        return f"kernel returned {type_name(got)}, want a (codes, scales) tuple"
    for what, arr, want in (("codes", got[0], want_codes), ("scales", got[1], want_scales)):
        if not isinstance(arr, np.ndarray):
            return f"kernel returned {what} as {type_name(arr)}, not a numpy array"
        if arr.dtype != want.dtype or arr.shape != want.shape:
            return f"kernel returned {what} {arr.dtype}{arr.shape}, want {want.dtype}{want.shape}"
    return ""


def _run_case(
    func: Callable[..., Any],
    label: str,
    name: str,
    args: tuple[Any, ...],
    want: tuple[np.ndarray, np.ndarray],
    elem: FormatSpec,
    offenders: list[Offender],
    by_class: Counter[str],
    max_offenders: int,
    same_nan: bool = False,
    scale_format: str = "float32",
) -> tuple[CaseResult, int, int]:
    """One kernel call on ``args`` (``args[0]`` is x), checked against ``want``.

    With ``same_nan`` a NaN code where another NaN code is wanted, or a NaN
    scale where another NaN is wanted, is no mismatch. Codes (and byte
    scales, of ``scale_format``) may come as float8 arrays of their format.
    """
    want_codes, want_scales = want
    n_words = want_codes.size + want_scales.size
    nonzero = int(((want_codes & elem.magnitude_mask) != 0).sum())
    try:
        got = outputs_as_codes(call_kernel(func, *args), elem, scale_format)
        error = _malformed(got, want_codes, want_scales)
    except KernelFaultError as exc:
        got, error = None, exc.reason
    except ValueError as exc:  # a float8 array of another format
        got, error = None, str(exc)
    if error or not isinstance(got, tuple):
        case = CaseResult(name, n_words, 1, 1, 0, 0, nonzero / want_codes.size, error)
        return case, nonzero, want_codes.size
    codes = np.array(got[0], np.uint8, copy=True)
    scales = np.array(got[1], copy=True)
    cmp = compare_codes(codes.reshape(-1), want_codes.reshape(-1), elem)
    if same_nan:
        cmp = CodeComparison(cmp.examined, cmp.mismatch, np.zeros_like(cmp.nan_code))
    scale_bad = (
        scales.view(np.uint8).reshape(scales.size, -1)
        != want_scales.view(np.uint8).reshape(want_scales.size, -1)
    ).any(axis=1)
    if same_nan and scales.dtype.kind == "f" and want_scales.dtype.kind == "f":
        both = np.isnan(scales.reshape(-1)) & np.isnan(want_scales.reshape(-1))
        scale_bad &= ~both  # a NaN scale of any sign or payload is the same NaN
    mismatches = cmp.mismatches + int(scale_bad.sum())
    by_class[label] += mismatches + cmp.nan_code_mismatches
    for i in np.flatnonzero(cmp.mismatch | cmp.nan_code)[: max(0, max_offenders - len(offenders))]:
        got_c, want_c = f"{codes.reshape(-1)[i]:#04x}", f"{want_codes.reshape(-1)[i]:#04x}"
        offenders.append(Offender(name, label, int(i), _input_hex(args, int(i)), got_c, want_c))
    for j in np.flatnonzero(scale_bad)[: max(0, max_offenders - len(offenders))]:
        got_s, want_s = _word_hex(scales, j), _word_hex(want_scales, j)
        offenders.append(Offender(name, label, int(j), f"scale[{j}]", got_s, want_s))
    failed = int(mismatches + cmp.nan_code_mismatches > 0)
    result = CaseResult(
        name, n_words, 1, failed, mismatches, cmp.nan_code_mismatches, nonzero / want_codes.size
    )
    return result, nonzero, want_codes.size


def _word_hex(words: np.ndarray, j: int) -> str:
    """Word ``j``'s bit pattern as one hex number, in its own width.

    float32: 8 digits; bfloat16: 4; an e8m0/e4m3 scale byte: 2.
    """
    raw = np.asarray(words).reshape(-1)[j : j + 1].view(np.uint8).tobytes()
    return "0x" + raw[::-1].hex()  # little-endian bytes, most significant first


# the names of a kernel call's inputs, in argument order (nvfp4 adds the global scale)
_INPUT_NAMES = ("x", "global_scale")


def _input_hex(args: tuple[Any, ...], i: int) -> str:
    """The inputs behind output word ``i`` as hex: ``x``'s word ``i`` in its own dtype.

    From the harness's own copy of the arguments, never the kernel's. One input:
    the bare hex (``0xc02ad8f1``, a bfloat16 ``0xc02b``); with a global scale
    (nvfp4) each input by name: ``x=0xc02ad8f1 global_scale=0x40400000``.
    """
    x = _word_hex(args[0], i)
    if len(args) == 1:
        return x
    rest = (f"{n}={_word_hex(a, 0)}" for n, a in zip(_INPUT_NAMES[1:], args[1:], strict=True))
    return " ".join((f"x={x}", *rest))
