"""Triton's interpreter against the scan reference: its own float8 conversion, and fp8lab's.

:func:`interpreter_proofs` compares, over a range of float32 patterns (all
2^32 by default), each conversion of :mod:`fp8lab.kernels.sources.triton_interp`
with the scan reference, saturating, under the NaN policy the hardware follows:
``canonical`` for e4m3fn (0x7F), ``all-ones`` for e5m2 (0x7F, where the
canonical e5m2 NaN is 0x7E). The replaced conversions agree everywhere. The
interpreter's stock conversion to e4m3fn differs, and its record counts where,
by class: a negative control the run declares (:func:`expected_verdicts`).
Where triton is absent, :func:`interpreter_run` proves nothing and its
verdicts are PENDING, naming the install line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fp8lab.kernels.sources.triton_interp import triton_version
from fp8lab.runtime.extras import absent
from fp8lab.sweeps.exhaustive import ExhaustiveRecord, run_exhaustive
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun, sharing_workers

__all__ = [
    "INTERPRETER_PROOFS",
    "InterpreterRun",
    "expected",
    "expected_verdicts",
    "interpreter_proofs",
    "interpreter_run",
]

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
    """Each of :data:`INTERPRETER_PROOFS` against ``scan`` over ``run``'s range, saturating.

    The three sweeps share one pool of workers (:func:`fp8lab.sweeps.range_run.sharing_workers`).
    """
    with sharing_workers(run) as shared:
        return [
            run_exhaustive(encoder, "scan", fmt, saturate=True, nan=nan, run=shared)
            for encoder, fmt, nan, _ in INTERPRETER_PROOFS
        ]


@dataclass(frozen=True)
class InterpreterRun:
    """The proofs of one run: triton's version and the records, or none and why not.

    Attributes:
        version: triton's version, or ``absent``.
        records: one per :data:`INTERPRETER_PROOFS`, in its order (none where triton is absent).
        absent: empty where triton imports, else why not and its install line.
    """

    version: str
    records: tuple[ExhaustiveRecord, ...]
    absent: str = ""

    def unexpected(self) -> list[str]:
        """What is not as :data:`INTERPRETER_PROOFS` says (empty: as expected, or PENDING)."""
        if self.absent:
            return [f"{len(self.records)} records, with triton absent"] if self.records else []
        if len(self.records) != len(INTERPRETER_PROOFS):
            return [f"{len(self.records)} records for {len(INTERPRETER_PROOFS)} proofs"]
        return [
            f"{r.a} {r.format}: does not show that it {what}"
            for r, (*_, what) in zip(self.records, INTERPRETER_PROOFS, strict=True)
            if not expected(r, what)
        ]

    def stock_by_class(self) -> list[dict[str, int]]:
        """The stock conversion's mismatches by class (no rows where triton is absent)."""
        return [dict(self.records[-1].mismatches_by_class)] if self.records else []

    def stock_examples(self) -> list[dict[str, Any]]:
        """The stock conversion's first wrong inputs of each class, one row each."""
        if not self.records:
            return []
        return [{"class": c, **e} for c, rows in self.records[-1].examples.items() for e in rows]

    def verdicts(self) -> dict[str, Any]:
        """The report summary's verdicts: the replaced conversions, then the stock one."""
        if self.absent:
            return dict.fromkeys(_VERDICTS, f"PENDING ({self.absent})")
        *replaced, stock = self.records
        why = "expected: the interpreter's own rounding is not the GPU's"
        shown: list[Any] = [r.status for r in replaced]
        return dict(zip(_VERDICTS, [*shown, f"{stock.status.value} ({why})"], strict=True))

    def numbers(self) -> dict[str, int]:
        """The report summary's numbers (zeros where triton is absent)."""
        if not self.records:
            return dict.fromkeys(_NUMBERS, 0)
        *replaced, stock = self.records
        counts = (stock.examined, stock.mismatches, sum(r.mismatches for r in replaced))
        return dict(zip(_NUMBERS, counts, strict=True))


_VERDICTS = (
    "replaced conversion to e4m3fn",
    "replaced conversion to e5m2 (NaN policy all-ones)",
    "stock conversion to e4m3fn",
)
_NUMBERS = (
    "float32 inputs compared per conversion",
    "inputs the stock conversion gets wrong",
    "inputs the replaced conversions get wrong",
)


def interpreter_run(run: RangeRun = EVERY_PATTERN) -> InterpreterRun:
    """:func:`interpreter_proofs` over ``run``'s range, or none where triton is absent."""
    why = absent("triton")
    if why:
        return InterpreterRun("absent", (), why)
    return InterpreterRun(triton_version(), tuple(interpreter_proofs(run)))
