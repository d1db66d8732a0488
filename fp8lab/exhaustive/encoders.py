"""Named encoders the exhaustive proof can compare, and ``MODULE:FUNC`` ones.

Each resolves, for a format and policy, to a callable from float32 arrays to
uint8 codes. The scan reference also evaluates contiguous bit-pattern ranges
directly (:func:`fp8lab.refs.scan_pattern_range`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import NanPolicy, encode, nan_policy
from fp8lab.formats import FORMATS, FormatSpec, get_format
from fp8lab.importing import ImportSpecError, import_object
from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.refs import ScanPolicy, ml_dtypes_encode, scan_encode, scan_pattern_range

__all__ = ["BUILTIN_ENCODERS", "Encoder", "EncoderError", "resolve_encoder"]

Codes = npt.NDArray[np.uint8]
BUILTIN_ENCODERS = ("fast", "fast-numpy", "array", "scan", "f32tofp8", "ml_dtypes")


class EncoderError(ValueError):
    """An encoder name that cannot be resolved or does not fit the policy."""


@dataclass(frozen=True)
class Encoder:
    """A float32 -> codes callable, optionally with a bit-pattern range evaluator."""

    name: str
    encode: Callable[[npt.NDArray[np.float32]], Codes]
    pattern_range: Callable[[int, int], Codes] | None = None
    policy_note: str = ""


@cache
def resolve_encoder(name: str, fmt_name: str, saturate: bool, nan: str) -> Encoder:
    """Resolve ``name`` for one format and policy.

    Raises:
        EncoderError: unknown name, failed import, or a policy the encoder lacks.
    """
    fmt: FormatSpec = get_format(fmt_name)
    policy = nan_policy(nan)
    if name in ("fast", "fast-numpy", "array"):
        method = "array" if name == "array" else "fast"
        engine = "numpy" if name == "fast-numpy" else "numba"
        return Encoder(
            name,
            lambda x: encode(x, fmt, saturate=saturate, nan=policy, method=method, engine=engine),
        )
    if name == "scan":
        scan_policy = ScanPolicy(saturate, policy is NanPolicy.KEEP_SIGN)
        return Encoder(
            name,
            lambda x: scan_encode(x, fmt, scan_policy),
            lambda lo, hi: scan_pattern_range(lo, hi, fmt, scan_policy),
        )
    if name == "f32tofp8":
        if fmt != FORMATS["e4m3fn"] or not saturate:
            raise EncoderError("f32tofp8 is the production e4m3fn encoder: saturating only")
        return Encoder(name, f32_to_fp8, policy_note="NaN -> 0x7F, sign dropped")
    if name == "ml_dtypes":
        return Encoder(
            name,
            lambda x: ml_dtypes_encode(x, fmt, saturate=saturate),
            policy_note="ml_dtypes keeps the NaN sign"
            + ("; clipped to ±max first (SATFINITE)" if saturate else ""),
        )
    if ":" not in name:
        raise EncoderError(f"{name!r} is neither a built-in encoder nor MODULE:FUNC")
    try:
        return Encoder(name, import_object(name), policy_note="user encoder")
    except ImportSpecError as exc:
        raise EncoderError(str(exc)) from None
