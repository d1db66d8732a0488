"""The shared-pass plan runner gives each proof the record it gets alone, faults included."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from fp8lab.evidence.proofs import MX_PROOF_PLAN, PROOF_PLAN, Proof
from fp8lab.gates.records import ProofStatus
from fp8lab.runtime.parallel import worker_pool
from fp8lab.sweeps import exhaustive_plan, plan_chunks
from fp8lab.sweeps.exhaustive import ExhaustiveRecord
from fp8lab.sweeps.exhaustive_plan import run_shared
from fp8lab.sweeps.range_run import RangeRun
from tests.dying_encoders import always_exit

pytestmark = pytest.mark.process  # worker pools

TIMING = ("wall_seconds",)
WIDTH = 1 << 22  # four chunks of 2**20 around each place
# around 1.0, the fp8 maxima (448, 57344), +-inf and the NaNs, fp8 subnormals (2**-9)
PLACES = (0x3F80_0000, 0x43E0_0000, 0x4760_0000, 0x7F80_0000, 0xFF80_0000, 0x3B00_0000)


def _json(record: ExhaustiveRecord) -> str:
    fields = asdict(record)
    for name in TIMING:
        fields.pop(name)
    return json.dumps(fields, indent=2, sort_keys=True)


def _tuples(plan: tuple[Proof, ...]) -> tuple[tuple[str, str, str, bool, str], ...]:
    return tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in plan)


@pytest.mark.slow
@pytest.mark.parametrize("plan", [PROOF_PLAN, MX_PROOF_PLAN], ids=["default", "mx"])
@pytest.mark.parametrize("centre", PLACES, ids=hex)
def test_shared_pass_gives_each_proof_its_record_alone(
    plan: tuple[Proof, ...], centre: int
) -> None:
    lo = max(0, centre - WIDTH // 2)
    run = RangeRun(start=lo, stop=min(lo + WIDTH, 1 << 32), chunk=WIDTH // 4, workers=1)
    shared = run_shared(_tuples(plan), run)
    for proof, record in zip(plan, shared, strict=True):
        assert _json(record) == _json(proof.run(run=run)), proof.slug


def test_a_faulting_side_faults_every_proof_using_it_and_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = plan_chunks.side_codes

    def array_raises(name: str, *args: object, **kwargs: bool) -> object:
        if name == "array":
            return "encoder 'array' raised planted"
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_chunks, "side_codes", array_raises)
    plan = tuple(p for p in PROOF_PLAN if p.format == "e4m3fn" and p.saturate)
    records = run_shared(_tuples(plan), RangeRun(start=0x3F80_0000, stop=0x3F81_0000, workers=1))
    for proof, record in zip(plan, records, strict=True):
        if "array" in (proof.a, proof.b):
            assert record.status == ProofStatus.KERNEL_ERROR, proof.slug
            assert record.fault == "encoder 'array' raised planted" and record.examined == 0
        else:
            assert record.status == ProofStatus.PASS, proof.slug


def test_a_user_encoder_proof_runs_alone_beside_the_shared_pass() -> None:
    plan = (
        ("fast", "scan", "e4m3fn", True, "canonical"),
        ("fast", "tests.dying_encoders:encoder_exits", "e4m3fn", True, "canonical"),
    )
    fast, user = run_shared(plan, RangeRun(stop=1 << 12, workers=1))
    assert fast.status == ProofStatus.PASS
    assert user.status == ProofStatus.KERNEL_ERROR and "exited" in user.fault, user.fault


@pytest.mark.slow
@pytest.mark.process
def test_a_dead_worker_faults_every_proof_of_its_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exhaustive_plan, "compare_plan_chunk", always_exit)
    plan = PROOF_PLAN[:3]
    with worker_pool(2) as pool:
        records = run_shared(_tuples(plan), RangeRun(stop=1 << 16, workers=2, executor=pool))
    for proof, record in zip(plan, records, strict=True):
        assert record.status == ProofStatus.KERNEL_ERROR
        assert record.fault.startswith(
            f"a worker process died while running {proof.a!r} vs {proof.b!r} ("
        ), record.fault
