"""Triton's interpreter against the scan reference: its own float8 conversion, and fp8lab's.

:func:`interpreter_proofs` compares, over a range of float32 patterns (all
2^32 by default), each conversion of :mod:`fp8lab.kernels.sources.triton_interp`
with the scan reference, saturating, canonical NaN. The replaced conversion
to e4m3fn agrees everywhere. The replaced one to e5m2 agrees on every input
but NaN, where it gives the hardware's 0x7F and the canonical code is 0x7E:
its record counts exactly the NaN patterns of the range as NaN-code
disagreements and nothing else. The interpreter's stock conversion to e4m3fn
differs, and its record counts where, by class.
"""

from __future__ import annotations

from fp8lab.sweeps.exhaustive import ExhaustiveRecord, run_exhaustive
from fp8lab.sweeps.range_run import ALL_PATTERNS, EVERY_PATTERN, RangeRun

__all__ = [
    "INTERPRETER_PROOFS",
    "expected",
    "expected_verdicts",
    "interpreter_proofs",
    "nan_patterns",
]

_MODULE = "fp8lab.kernels.sources.triton_interp"
# (encoder, format, what its record must show): the replaced conversions, then the stock one
INTERPRETER_PROOFS: tuple[tuple[str, str, str], ...] = (
    (f"{_MODULE}:hardware_e4m3fn", "e4m3fn", "agrees"),
    (f"{_MODULE}:hardware_e5m2", "e5m2", "agrees but NaN 0x7F"),
    (f"{_MODULE}:stock_e4m3fn", "e4m3fn", "differs"),
)
# Why a record whose verdict is FAIL shows what it must (the front page prints it beside it)
_WHY_FAIL = {
    "agrees but NaN 0x7F": "every NaN input gives the hardware's NaN 0x7F, not the canonical "
    "0x7E; nothing else differs",
    "differs": "negative control: the interpreter's own conversion is not the hardware's",
}
_NAN_RANGES = ((0x7F80_0001, 0x8000_0000), (0xFF80_0001, 0x1_0000_0000))


def nan_patterns(start: int, stop: int) -> int:
    """How many float32 NaN bit patterns lie in ``[start, stop)``."""
    return sum(max(0, min(stop, hi) - max(start, lo)) for lo, hi in _NAN_RANGES)


def expected(record: ExhaustiveRecord, what: str) -> bool:
    """Whether ``record`` shows what :data:`INTERPRETER_PROOFS` says it must."""
    whole = record.examined == record.stop - record.start and not record.fault
    if what == "agrees":
        return whole and record.status.value == "PASS"
    if what == "agrees but NaN 0x7F":
        nans = nan_patterns(record.start, record.stop)
        return whole and record.mismatches == 0 and record.nan_code_mismatches == nans
    return whole and record.mismatches > 0


def expected_verdicts(run: RangeRun = EVERY_PATTERN) -> list[dict[str, str]]:
    """The records of :data:`INTERPRETER_PROOFS` whose verdict over ``run`` must be FAIL, and why.

    Rows of the run's ``expected_verdicts`` table: each names a proof by
    ``a``, ``b`` and ``format``; :func:`expected` is what the notebook asserts.
    The e5m2 conversion's record FAILs only where the range holds a NaN.
    """
    nans = nan_patterns(run.start, ALL_PATTERNS if run.stop is None else run.stop)
    return [
        {"a": encoder, "b": "scan", "format": fmt, "expected_status": "FAIL", "why": why}
        for encoder, fmt, what in INTERPRETER_PROOFS
        if (why := _WHY_FAIL.get(what)) and (nans or what != "agrees but NaN 0x7F")
    ]


def interpreter_proofs(run: RangeRun = EVERY_PATTERN) -> list[ExhaustiveRecord]:
    """Each of :data:`INTERPRETER_PROOFS` against ``scan`` over ``run``'s range, saturating."""
    return [
        run_exhaustive(encoder, "scan", fmt, saturate=True, nan="canonical", run=run)
        for encoder, fmt, _ in INTERPRETER_PROOFS
    ]
