"""Named encoders the exhaustive proof can compare, and ``MODULE:FUNC`` ones.

Each resolves, for a format and policy, to a callable from float32 arrays to
uint8 codes. The scan reference also evaluates contiguous bit-pattern ranges
directly (:func:`fp8lab.refs.scan_pattern_range`). Two built-in oracles keep a
NaN policy of their own whatever the run asks for (``fixed_nan``): ml_dtypes
keeps the NaN sign, the ``F32ToFp8`` port emits 0x7F. A ``MODULE:FUNC`` encoder
runs in a child process of its own, under a watchdog; it receives the run's
format and policies as keyword arguments if its signature takes them (``fmt``
or ``format``, ``saturate``, ``nan``; or ``**kwargs``).

A run under :data:`ANY_NAN` (``--nan any``) holds no side to a NaN code: every
NaN code of the format is the same NaN. Its encoders are asked for the
canonical code (a ``MODULE:FUNC`` encoder receives ``nan="canonical"``).

An encoder maps each float32 to its code, whatever else the array holds, so
its process calls a ``MODULE:FUNC`` encoder on slices of at most
:data:`ENCODER_PIECE` patterns of each chunk (1 MiB of float32) and joins the
codes: the arrays a numpy encoder makes stay in cache instead of going to
memory (Triton's interpreter's own conversion took 1.4 times as long in calls
of a whole chunk, 2^22 patterns).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import codec_nan_policy, encode
from fp8lab.kernels.f32tofp8 import f32_to_fp8
from fp8lab.kernels.sources.isolated import KernelHost
from fp8lab.kernels.sources.loaders import RUN_KEYWORDS, KernelLoadError
from fp8lab.kernels.sources.process_hosts import process_host
from fp8lab.refs import ScanPolicy, ml_dtypes_encode, scan_encode, scan_pattern_range
from fp8lab.runtime.extras import absent
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS, get_format
from fp8lab.specs.rule_axes import NanCode

__all__ = [
    "ANY_NAN",
    "BUILTIN_ENCODERS",
    "ENCODER_PIECE",
    "RUN_KEYWORDS",
    "Encoder",
    "EncoderError",
    "asked_nan",
    "resolve_encoder",
]

Codes = npt.NDArray[np.uint8]
BUILTIN_ENCODERS = (
    "fast",
    "fast-numpy",
    "fast-bits",
    "array",
    "scan",
    "f32tofp8",
    "ml_dtypes",
    "onnx-reference",
    "onnxruntime",
)
# ONNX's Cast to float8 by a runtime (the onnx extra), run in the worker as ml_dtypes is
ONNX_ENCODERS = {"onnx-reference": "reference", "onnxruntime": "onnxruntime"}
ANY_NAN = NanCode.ANY.value  # every NaN code the same NaN (a rule's nan_code = "any")
ENCODER_PIECE = 1 << 18  # float32 patterns per call of a MODULE:FUNC encoder


def asked_nan(nan: str) -> str:
    """The NaN policy the encoders of a run under ``nan`` are asked for."""
    return "canonical" if nan == ANY_NAN else nan


class EncoderError(ValueError):
    """An encoder name that cannot be resolved or does not fit the policy."""


@dataclass(frozen=True)
class Encoder:
    """A float32 -> codes callable, optionally with a bit-pattern range evaluator.

    Args:
        name: the name it was resolved from.
        encode: float32 array -> uint8 codes.
        pattern_range: ``(start, stop) -> codes`` of those bit patterns, or None.
        policy_note: what the record says about its policy.
        fixed_nan: the NaN policy it applies whatever is requested, or None if it
            honours the request.
        host: the process a user's encoder runs in (its findings: the
            floating-point environment it left), or None for a built-in one.
    """

    name: str
    encode: Callable[[npt.NDArray[np.float32]], Codes]
    pattern_range: Callable[[int, int], Codes] | None = None
    policy_note: str = ""
    fixed_nan: str | None = None
    host: KernelHost | None = None


def _onnx_encoder(name: str, fmt: FormatSpec, saturate: bool) -> Encoder:
    """ONNX's ``Cast(to=float8, saturate)`` by the runtime ``name`` names, in this process."""
    runtime = ONNX_ENCODERS[name]
    why = absent("onnx", ("onnx", "onnxruntime" if runtime == "onnxruntime" else "onnx"))
    if why:
        raise EncoderError(why)
    if fmt.name not in ("e4m3fn", "e5m2"):
        raise EncoderError(f"{name} casts to e4m3fn and e5m2 only, not {fmt.name}")
    from fp8lab.kernels.library.onnx_quant import OnnxCast

    cast = OnnxCast(runtime)
    return Encoder(
        name,
        lambda x: cast(x, fmt.name, saturate),
        policy_note=f"ONNX Cast by {runtime} (opset 23); NaN keeps its sign",
        fixed_nan="keep-sign",
    )


def _user_encoder(name: str, fmt: str, saturate: bool, nan: str) -> Encoder:
    """``name`` in a child process of this one's (:mod:`fp8lab.kernels.sources.process_hosts`)."""
    run = {"fmt": fmt, "saturate": saturate, "nan": nan}
    host = process_host("encoder", name, run=run)
    try:
        receives = host.declared.get("receives") or []
    except KernelLoadError as exc:
        raise EncoderError(str(exc).removeprefix("--kernel: ")) from None
    note = "user encoder" + (f"; receives {', '.join(receives)}" if receives else "")
    encode = partial(host.call, "__call__", pieces=ENCODER_PIECE)
    return Encoder(name, encode, policy_note=note, host=host)


@cache
def resolve_encoder(name: str, fmt_name: str, saturate: bool, nan: str) -> Encoder:
    """Resolve ``name`` for one format and policy.

    Raises:
        EncoderError: unknown name, failed import, or a policy the encoder lacks.
    """
    fmt: FormatSpec = get_format(fmt_name)
    policy = codec_nan_policy(asked_nan(nan))
    if name in ("fast", "fast-numpy", "fast-bits", "array"):
        method = "array" if name == "array" else "fast"
        engine = {"fast-numpy": "numpy", "fast-bits": "bits"}.get(name, "numba")
        return Encoder(
            name,
            lambda x: encode(x, fmt, saturate=saturate, nan=policy, method=method, engine=engine),
        )
    if name == "scan":
        scan_policy = ScanPolicy(saturate, policy.sign == "input", policy.all_ones)
        return Encoder(
            name,
            lambda x: scan_encode(x, fmt, scan_policy),
            lambda lo, hi: scan_pattern_range(lo, hi, fmt, scan_policy),
        )
    if name == "f32tofp8":
        if fmt != FORMATS["e4m3fn"] or not saturate:
            raise EncoderError("f32tofp8 is the production e4m3fn encoder: saturating only")
        return Encoder(
            name,
            f32_to_fp8,
            policy_note="NaN -> 0x7F, sign dropped",
            fixed_nan="canonical",
        )
    if name == "ml_dtypes":
        return Encoder(
            name,
            lambda x: ml_dtypes_encode(x, fmt, saturate=saturate),
            policy_note="ml_dtypes keeps the NaN sign"
            + ("; clipped to ±max first (SATFINITE)" if saturate else ""),
            fixed_nan="keep-sign",
        )
    if name in ONNX_ENCODERS:
        return _onnx_encoder(name, fmt, saturate)
    if ":" not in name:
        raise EncoderError(f"{name!r} is neither a built-in encoder nor MODULE:FUNC")
    return _user_encoder(name, fmt.name, saturate, policy.name)
