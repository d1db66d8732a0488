"""Triton's interpreter against the scan reference: its own float8 conversion, and fp8lab's.

:func:`interpreter_proofs` compares, over a range of float32 patterns (all
2^32 by default), each conversion of :mod:`fp8lab.kernels.sources.triton_interp`
with the scan reference under PTX ``cvt.rn.satfinite`` semantics (saturating,
canonical NaN): the replaced conversions to e4m3fn and e5m2 must PASS; the
interpreter's stock conversion to e4m3fn FAILs, and its record counts how
many inputs it gets wrong, by class.
"""

from __future__ import annotations

from fp8lab.sweeps.exhaustive import ExhaustiveRecord, run_exhaustive
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun

__all__ = ["INTERPRETER_PROOFS", "interpreter_proofs"]

_MODULE = "fp8lab.kernels.sources.triton_interp"
# (encoder, format, expected status): the replaced conversions, then the stock one
INTERPRETER_PROOFS: tuple[tuple[str, str, str], ...] = (
    (f"{_MODULE}:hardware_e4m3fn", "e4m3fn", "PASS"),
    (f"{_MODULE}:hardware_e5m2", "e5m2", "PASS"),
    (f"{_MODULE}:stock_e4m3fn", "e4m3fn", "FAIL"),
)


def interpreter_proofs(run: RangeRun = EVERY_PATTERN) -> list[ExhaustiveRecord]:
    """Each of :data:`INTERPRETER_PROOFS` against ``scan`` over ``run``'s range, saturating."""
    return [
        run_exhaustive(encoder, "scan", fmt, saturate=True, nan="canonical", run=run)
        for encoder, fmt, _ in INTERPRETER_PROOFS
    ]
