"""The triton_interpreter notebook's check: the proofs as declared, or PENDING without triton.

Records are written here, so no triton is needed: a replaced conversion that
fails, a stock one that agrees, a short range or a missing record each go red.
"""

from __future__ import annotations

import dataclasses

import pytest

from fp8lab.gates.records import ProofStatus
from fp8lab.studies.triton_interp import INTERPRETER_PROOFS, InterpreterRun
from fp8lab.sweeps.exhaustive import ExhaustiveRecord

START, STOP = 0x3F000000, 0x40000000


def record(encoder: str, fmt: str, mismatches: int) -> ExhaustiveRecord:
    return ExhaustiveRecord(
        a=encoder,
        b="scan",
        format=fmt,
        saturate=True,
        nan="canonical",
        start=START,
        stop=STOP,
        examined=STOP - START,
        mismatches=mismatches,
        nan_code_mismatches=0,
        mismatches_by_class={"other": mismatches},
        examples={"other": [{"x": "0x3ff80000"}]} if mismatches else {},
        policy_notes={},
        chunks=1,
        workers=1,
        wall_seconds=1.0,
        status=ProofStatus.FAIL if mismatches else ProofStatus.PASS,
    )


AS_DECLARED = tuple(
    record(encoder, fmt, 5 if what == "differs" else 0)
    for encoder, fmt, _, what in INTERPRETER_PROOFS
)


def test_the_declared_outcome_is_expected_and_summarised() -> None:
    run = InterpreterRun("3.9.0", AS_DECLARED)
    assert run.unexpected() == []
    assert run.stock_by_class() == [{"other": 5}]
    assert run.stock_examples() == [{"class": "other", "x": "0x3ff80000"}]
    verdicts = list(run.verdicts().values())
    assert verdicts[:2] == [ProofStatus.PASS, ProofStatus.PASS]
    assert verdicts[2].startswith("FAIL (expected: ")
    assert list(run.numbers().values()) == [STOP - START, 5, 0]


@pytest.mark.parametrize(
    "planted",
    [
        (0, {"mismatches": 1, "status": ProofStatus.FAIL}),  # a replaced conversion wrong
        (2, {"mismatches": 0, "status": ProofStatus.PASS}),  # the stock one right
        (1, {"examined": 16}),  # a range not examined whole
        (0, {"fault": "worker died"}),
    ],
)
def test_a_proof_not_as_declared_goes_red(planted: tuple[int, dict[str, object]]) -> None:
    at, change = planted
    records = list(AS_DECLARED)
    records[at] = dataclasses.replace(records[at], **change)  # type: ignore[arg-type]
    assert InterpreterRun("3.9.0", tuple(records)).unexpected()


def test_a_missing_record_or_records_without_triton_go_red() -> None:
    assert InterpreterRun("3.9.0", AS_DECLARED[:2]).unexpected()
    assert InterpreterRun("absent", AS_DECLARED, "triton is absent").unexpected()
