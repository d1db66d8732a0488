"""Several exhaustive proofs in shared passes: each chunk evaluates each encoder side once.

The proofs whose sides are all built-in encoders are grouped by the pattern
ranges they examine (:func:`fp8lab.sweeps.exhaustive.proof_domain`, the same
for every format with NaN codes); each group is one pass over its chunks on the
run's executor, and each chunk compares every proof of the group from one
evaluation of each distinct side (:func:`fp8lab.sweeps.plan_chunks.compare_plan_chunk`).
Every record equals the one :func:`fp8lab.sweeps.exhaustive.run_exhaustive`
gives for that proof alone, except ``wall_seconds``, which is the shared
pass's. A proof with a ``MODULE:FUNC`` side runs alone through ``run_exhaustive``.

A worker process that dies during a pass faults every proof of that pass,
each with the line ``run_exhaustive`` writes.
"""

from __future__ import annotations

import time

from fp8lab.codecs import special_codes
from fp8lab.runtime.parallel import WorkerLostError, run_tasks
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.encoders import resolve_encoder
from fp8lab.sweeps.exhaustive import (
    ExhaustiveRecord,
    Outcome,
    build_record,
    proof_domain,
    run_exhaustive,
    worker_lost,
)
from fp8lab.sweeps.exhaustive_chunks import ChunkResult
from fp8lab.sweeps.plan_chunks import PlanProof, compare_plan_chunk, shareable
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun

__all__ = ["run_shared"]


def run_shared(
    proofs: tuple[PlanProof, ...], run: RangeRun = EVERY_PATTERN
) -> list[ExhaustiveRecord]:
    """Each of ``proofs`` (``(a, b, format, saturate, nan)``) over ``run``'s range, in order.

    Raises:
        EncoderError: if an encoder cannot be resolved (checked before any work).
        ValueError: for an empty or out-of-range pattern range, or a policy a
            format cannot take.
    """
    start, stop = run.bounds()
    groups: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for i, (a, b, fmt, saturate, nan) in enumerate(proofs):
        spec = get_format(fmt)
        special_codes(spec, saturate=saturate, nan=nan)
        for name in (a, b):
            resolve_encoder(name, spec.name, saturate, nan)
        if shareable(proofs[i]):
            groups.setdefault(tuple(proof_domain(spec, start, stop)), []).append(i)
    records: dict[int, ExhaustiveRecord] = {}
    for ranges, members in groups.items():
        group = tuple(proofs[i] for i in members)
        for i, record in zip(members, _pass(group, ranges, (start, stop), run), strict=True):
            records[i] = record
    for i, (a, b, fmt, saturate, nan) in enumerate(proofs):
        if i not in records:
            records[i] = run_exhaustive(a, b, fmt, saturate=saturate, nan=nan, run=run)
    return [records[i] for i in range(len(proofs))]


def _pass(
    group: tuple[PlanProof, ...],
    ranges: tuple[tuple[int, int], ...],
    span: tuple[int, int],
    run: RangeRun,
) -> list[ExhaustiveRecord]:
    """One pass over ``ranges``' chunks comparing every proof of ``group``."""
    bounds = run.chunks(ranges)
    place = run.placement()
    sides = {(name, p[2], p[3], p[4]) for p in group for name in p[:2]}
    label = f"exhaustive: {len(group)} proofs, {len(sides)} encoder sides, one pass"
    report = run.reporter(label, len(bounds))
    t0 = time.monotonic()
    results: list[tuple[ChunkResult, ...]] = []
    lost = None
    try:
        results = run_tasks(
            compare_plan_chunk,
            [(group, lo, hi) for lo, hi in bounds],
            workers=place.workers,
            executor=place.executor,
            report=report,
        )
    except WorkerLostError as exc:
        lost = exc
    wall = round(time.monotonic() - t0, 3)
    records = []
    for k, (a, b, fmt, saturate, nan) in enumerate(group):
        fault = worker_lost(a, b, lost) if lost else ""
        done = Outcome([r[k] for r in results], fault, wall)
        spec = get_format(fmt)
        records.append(build_record(a, b, spec, saturate, nan, span, done, place))
    return records
