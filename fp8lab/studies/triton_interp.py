"""Triton's interpreter against the scan reference: its own float8 conversion, and fp8lab's.

:func:`interpreter_proofs` compares, over a range of float32 patterns (all
2^32 by default), each conversion of :mod:`fp8lab.kernels.sources.triton_interp`
with the scan reference, saturating, under the NaN policy the hardware follows:
``canonical`` for e4m3fn (0x7F), ``all-ones`` for e5m2 (0x7F, where the
canonical e5m2 NaN is 0x7E). The replaced conversions agree everywhere. The
interpreter's stock conversion to e4m3fn differs, and its record counts where,
by class: a negative control the run declares (:func:`expected_verdicts`).
"""

from __future__ import annotations

from fp8lab.sweeps.exhaustive import ExhaustiveRecord, run_exhaustive
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun

__all__ = ["INTERPRETER_PROOFS", "expected", "expected_verdicts", "interpreter_proofs"]

_MODULE = "fp8lab.kernels.sources.triton_interp"
# (encoder, format, NaN policy, what its record must show): the replaced conversions, then
# the stock one
INTERPRETER_PROOFS: tuple[tuple[str, str, str, str], ...] = (
    (f"{_MODULE}:hardware_e4m3fn", "e4m3fn", "canonical", "agrees"),
    (f"{_MODULE}:hardware_e5m2", "e5m2", "all-ones", "agrees"),
    (f"{_MODULE}:stock_e4m3fn", "e4m3fn", "canonical", "differs"),
)
_WHY_DIFFERS = "negative control: the interpreter's own conversion is not the hardware's"


def expected(record: ExhaustiveRecord, what: str) -> bool:
    """Whether ``record`` shows what :data:`INTERPRETER_PROOFS` says it must."""
    whole = record.examined == record.stop - record.start and not record.fault
    if what == "agrees":
        return whole and record.status.value == "PASS"
    return whole and record.mismatches > 0


def expected_verdicts() -> list[dict[str, str]]:
    """The records of :data:`INTERPRETER_PROOFS` whose verdict must be FAIL, and why.

    Rows of the run's ``expected_verdicts`` table: each names a proof by
    ``a``, ``b`` and ``format``; :func:`expected` is what the notebook asserts.
    """
    return [
        {"a": encoder, "b": "scan", "format": fmt, "expected_status": "FAIL", "why": _WHY_DIFFERS}
        for encoder, fmt, _, what in INTERPRETER_PROOFS
        if what == "differs"
    ]


def interpreter_proofs(run: RangeRun = EVERY_PATTERN) -> list[ExhaustiveRecord]:
    """Each of :data:`INTERPRETER_PROOFS` against ``scan`` over ``run``'s range, saturating."""
    return [
        run_exhaustive(encoder, "scan", fmt, saturate=True, nan=nan, run=run)
        for encoder, fmt, nan, _ in INTERPRETER_PROOFS
    ]
