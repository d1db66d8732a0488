"""The shared pass derives saturating ml_dtypes codes from the plain ones: the same bytes.

:func:`fp8lab.sweeps.plan_chunks.saturated_ml_dtypes` is checked lane for lane
against :func:`fp8lab.refs.ml_dtypes_encode` with ``saturate=True`` (its slow
twin, which :func:`fp8lab.sweeps.exhaustive.run_exhaustive` still evaluates),
and the plan's records against the one-proof-at-a-time ones, on windows around
every plan format's ``±max``, ``±inf``, both signs' NaNs and the fp8 and
float32 subnormals.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from fp8lab.evidence.proofs import PROOF_PLAN, Proof
from fp8lab.gates.records import ProofStatus
from fp8lab.refs import ml_dtypes_encode
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS, get_format
from fp8lab.sweeps import plan_chunks
from fp8lab.sweeps.exhaustive import ExhaustiveRecord
from fp8lab.sweeps.exhaustive_chunks import chunk_patterns
from fp8lab.sweeps.exhaustive_plan import run_shared
from fp8lab.sweeps.plan_chunks import compare_plan_chunk, saturated_ml_dtypes
from fp8lab.sweeps.range_run import RangeRun

WIDTH = 1 << 12
SIGN = 1 << 31
PLAN_FORMATS = tuple(dict.fromkeys(p.format for p in PROOF_PLAN))
ML_DTYPES_SATURATING = tuple(p for p in PROOF_PLAN if p.b == "ml_dtypes" and p.saturate)


def _bits(value: object) -> int:
    return int(np.asarray(float(value), np.float32).view(np.uint32))  # type: ignore[arg-type]


def _overflow(spec: FormatSpec) -> int:
    """The pattern half a step above max: from it on, a non-saturating cast overflows."""
    return _bits(spec.max + (spec.max - spec.exact_value(spec.max_code - 1)) / 2)


def _centres(spec: FormatSpec) -> tuple[int, ...]:
    """Both signs of: max, where overflow starts, inf and the NaNs after it, the fp8 and
    float32 subnormals, 0."""
    one_sign = (
        _bits(spec.max),
        _overflow(spec),
        0x7F80_0000,
        0x7FC0_0000,
        (1 << 31) - WIDTH // 2,  # the last NaNs before the sign cut
        _bits(spec.smallest_subnormal),
        _bits(spec.smallest_normal),
        0x0080_0000,  # float32's smallest normal, after its subnormals
        WIDTH // 2,  # +0 and the smallest float32 subnormals
    )
    return (*one_sign, *(c | SIGN for c in one_sign))


def _windows(spec: FormatSpec) -> list[tuple[int, int]]:
    out = []
    for centre in _centres(spec):
        lo = min(max(0, centre - WIDTH // 2), (1 << 32) - WIDTH)
        out.append((lo, lo + WIDTH))
    return out


def _json(record: ExhaustiveRecord) -> str:
    fields = asdict(record)
    fields.pop("wall_seconds")
    return json.dumps(fields, sort_keys=True)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_derived_codes_are_ml_dtypes_own_on_boundary_windows(fmt: str) -> None:
    spec = get_format(fmt)
    for lo, hi in _windows(spec):
        x = chunk_patterns(lo, hi)
        plain = ml_dtypes_encode(x, spec, saturate=False)
        want = ml_dtypes_encode(x, spec, saturate=True)
        assert saturated_ml_dtypes(x, spec, plain).tobytes() == want.tobytes(), hex(lo)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_derived_codes_are_ml_dtypes_own_on_mixed_lanes(fmt: str) -> None:
    """All windows at once, shuffled: every lane kind (in range, over, NaN) of both signs."""
    spec = get_format(fmt)
    x = np.concatenate([chunk_patterns(lo, hi) for lo, hi in _windows(spec)])
    x = x[np.random.default_rng(20261204).permutation(x.size)]
    plain = ml_dtypes_encode(x, spec, saturate=False)
    want = ml_dtypes_encode(x, spec, saturate=True)
    assert saturated_ml_dtypes(x, spec, plain).tobytes() == want.tobytes()


def test_a_non_float32_input_is_refused() -> None:
    x = np.zeros(4, np.float64)
    with pytest.raises(TypeError, match="float32"):
        saturated_ml_dtypes(x, FORMATS["e4m3fn"], np.zeros(4, np.uint8))  # type: ignore[arg-type]


def _records_agree(plan: tuple[Proof, ...], windows: list[tuple[int, int]]) -> list[str]:
    """The slugs (with window) whose shared-pass record differs from the proof's alone."""
    tuples = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in plan)
    differ = []
    for lo, hi in windows:
        run = RangeRun(start=lo, stop=hi, chunk=WIDTH // 2, workers=1)
        for proof, record in zip(plan, run_shared(tuples, run), strict=True):
            if _json(record) != _json(proof.run(run=run)):
                differ.append(f"{proof.slug}@{lo:#x}")
    return differ


def _plan_windows() -> list[tuple[int, int]]:
    """Every plan format's windows; in two chunks each, one of them is mixed at ±max and ±inf."""
    return sorted({w for f in PLAN_FORMATS for w in _windows(get_format(f))})


def test_plan_records_are_the_one_at_a_time_records_on_boundary_windows() -> None:
    assert ML_DTYPES_SATURATING, "the plan has saturating ml_dtypes proofs to derive"
    assert _records_agree(PROOF_PLAN, _plan_windows()) == []


def test_a_wrong_derivation_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the saturating side reuses the plain codes everywhere, clip forgotten."""
    monkeypatch.setattr(plan_chunks, "saturated_ml_dtypes", lambda x, fmt, plain: plain)
    plan = tuple(p for p in PROOF_PLAN if p.b == "ml_dtypes" and p.format == "e4m3fn")
    lo = _overflow(FORMATS["e4m3fn"]) - WIDTH // 2
    differ = _records_agree(plan, [(lo, lo + WIDTH)])
    assert differ == [f"fast-vs-ml_dtypes-e4m3fn-sat-keep-sign@{lo:#x}"]


def _chunk(plan: tuple[Proof, ...], lo: int) -> tuple[plan_chunks.ChunkResult, ...]:
    tuples = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in plan)
    return compare_plan_chunk(tuples, lo, lo + WIDTH)


def test_the_saturating_side_is_derived_only_after_the_plain_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plan order decides: the plain side first lets the saturating one be derived."""
    evaluated: list[tuple[str, str, bool]] = []
    real = plan_chunks.side_codes

    def spy(name: str, fmt: str, saturate: bool, *args: object, **kwargs: bool) -> object:
        evaluated.append((name, fmt, saturate))
        return real(name, fmt, saturate, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_chunks, "side_codes", spy)
    plain = Proof("fast", "ml_dtypes", "e5m2", False, "keep-sign")
    saturating = Proof("fast", "ml_dtypes", "e5m2", True, "keep-sign")
    lo = _bits(FORMATS["e5m2"].max) - WIDTH // 2
    derived = _chunk((plain, saturating), lo)
    assert ("ml_dtypes", "e5m2", True) not in evaluated
    evaluated.clear()
    alone = _chunk((saturating, plain), lo)
    assert ("ml_dtypes", "e5m2", True) in evaluated
    assert derived == alone[::-1]


def test_a_faulting_plain_side_leaves_the_saturating_one_evaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = plan_chunks.side_codes

    def plain_raises(name: str, fmt: str, saturate: bool, *args: object, **kw: bool) -> object:
        if name == "ml_dtypes" and not saturate:
            return "encoder 'ml_dtypes' raised planted"
        return real(name, fmt, saturate, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_chunks, "side_codes", plain_raises)
    plan = tuple(p for p in PROOF_PLAN if p.b == "ml_dtypes" and p.format == "e4m3fn")
    lo = _bits(FORMATS["e4m3fn"].max) - WIDTH // 2
    for proof, result in zip(plan, _chunk(plan, lo), strict=True):
        if proof.saturate:
            assert result.fault == "" and result.examined == WIDTH, proof.slug
        else:
            assert result.fault == "encoder 'ml_dtypes' raised planted", proof.slug


def test_a_failing_derivation_is_the_ml_dtypes_sides_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("planted")

    monkeypatch.setattr(plan_chunks, "saturated_ml_dtypes", broken)
    plan = tuple(p for p in PROOF_PLAN if p.b == "ml_dtypes" and p.format == "e4m3fn")
    tuples = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in plan)
    records = run_shared(tuples, RangeRun(start=0x3F80_0000, stop=0x3F81_0000, workers=1))
    for proof, record in zip(plan, records, strict=True):
        if proof.saturate:
            assert record.status == ProofStatus.KERNEL_ERROR, proof.slug
            assert record.fault == "encoder 'ml_dtypes' raised RuntimeError: planted"
        else:
            assert record.status == ProofStatus.PASS, proof.slug
