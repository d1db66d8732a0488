"""The codec atlas shows the fresh ``fp8lab prove`` run's records instead of proving twice.

``published_plan_records`` may hand over a run only when ``evidence --check``
would call it fresh; each planted defect below (a stale package, an edited
file, a partial range, another plan) must make it refuse, so that the atlas
runs the plan itself.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

import fp8lab.evidence.proofs as proofs
from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.proofs import PROOF_PLAN, published_plan_records
from fp8lab.sweeps.exhaustive import ExhaustiveRecord
from fp8lab.sweeps.range_run import ALL_PATTERNS

SLUGS = [p.slug for p in PROOF_PLAN]


def _record(proof: proofs.Proof) -> ExhaustiveRecord:
    return ExhaustiveRecord(
        proof.a, proof.b, proof.format, proof.saturate, proof.nan, 0, ALL_PATTERNS,
        ALL_PATTERNS, 0, 0, {}, {}, {}, 1024, 2, 1.5, "PASS",
        covered=[["0x00000000", "0x100000000"]],
    )  # fmt: skip


def proofs_run(results: Path, *, stop: int = ALL_PATTERNS, plan: list[str] = SLUGS) -> Path:
    with EvidenceRun(
        results, "proofs", {"stop": stop, "plan": plan}, partial=stop < ALL_PATTERNS
    ) as run:
        for proof in PROOF_PLAN:
            run.write_json(f"exhaustive/{proof.slug}.json", asdict(_record(proof)))
    assert run.final is not None
    return run.final


def test_a_fresh_run_hands_over_its_records_in_plan_order(tmp_path: Path) -> None:
    directory = proofs_run(tmp_path)
    found = published_plan_records(tmp_path)
    assert found is not None
    assert found[0] == directory
    assert found[1] == [_record(p) for p in PROOF_PLAN]


def test_no_run_means_the_atlas_proves_itself(tmp_path: Path) -> None:
    assert published_plan_records(tmp_path) is None


def test_a_stale_run_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proofs_run(tmp_path)
    monkeypatch.setattr(proofs, "code_hash", lambda: "a-package-edited-since")
    assert published_plan_records(tmp_path) is None


def test_an_edited_record_is_refused(tmp_path: Path) -> None:
    directory = proofs_run(tmp_path)
    path = directory / "exhaustive" / f"{SLUGS[0]}.json"
    edited = replace(_record(PROOF_PLAN[0]), mismatches=0, wall_seconds=0.5)
    path.chmod(0o644)
    path.write_text(json.dumps(asdict(edited)))
    assert published_plan_records(tmp_path) is None


def test_a_partial_run_or_another_plan_is_refused(tmp_path: Path) -> None:
    proofs_run(tmp_path / "partial", stop=1 << 20)
    assert published_plan_records(tmp_path / "partial") is None
    proofs_run(tmp_path / "other", plan=SLUGS[:-1])
    assert published_plan_records(tmp_path / "other") is None


def test_a_run_with_a_newer_failed_attempt_is_refused(tmp_path: Path) -> None:
    proofs_run(tmp_path)
    params = {"stop": ALL_PATTERNS, "plan": SLUGS}
    with pytest.raises(RuntimeError), EvidenceRun(tmp_path, "proofs", params):
        raise RuntimeError("failed: a proof")  # as run_proofs files a FAIL
    assert published_plan_records(tmp_path) is None
