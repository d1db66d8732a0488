"""Compare two encoders on every float32 bit pattern, in chunks, on all cores.

Each chunk materialises its patterns, runs both encoders on private read-only
copies and classifies any disagreement (:mod:`fp8lab.sweeps.exhaustive_chunks`).
Workers are separate processes that resolve the encoders by name, so
``MODULE:FUNC`` encoders work as long as the module is importable; each
runs in a child process of the worker's, under a watchdog
(:mod:`fp8lab.kernels.sources.process_hosts`), and no fp8lab process imports it.

A format without NaN codes (e2m1fn, e2m3fn, e3m2fn) has no answer for a NaN
input, so its domain is the range minus the NaN patterns
(:data:`fp8lab.refs.scan.NAN_PATTERN_RANGES`): the chunks skip them, and
``examined`` counts the rest.

Outcomes: ``PASS`` (every pattern of the domain examined, no mismatch, every NaN code the
one its side is held to), ``FAIL``, or ``kernel-error`` (an encoder raised,
exited, returned something that is not uint8 codes of the input's shape, or a
worker process died); the record's ``fault`` says which and how.

Coverage is proven from the chunks that came back (:mod:`fp8lab.sweeps.coverage`):
``covered`` lists them merged, and a gap or overlap is a FAIL naming it. The
chunks are pure functions of (encoders, format, policy, range), so they may run
on any executor, a dask cluster's included (:mod:`fp8lab.runtime.cluster`): the record
is the same except ``wall_seconds``, ``workers`` and ``executor``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

from fp8lab.codecs import special_codes
from fp8lab.gates.records import ProofStatus
from fp8lab.refs.scan import NAN_PATTERN_RANGES
from fp8lab.runtime.parallel import WorkerLostError, run_tasks
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.coverage import CoverageError, covered_domain
from fp8lab.sweeps.encoders import asked_nan, resolve_encoder
from fp8lab.sweeps.exhaustive_chunks import (
    ChunkResult,
    compare_chunk,
    exempt_sides,
    merge_chunks,
)
from fp8lab.sweeps.range_run import EVERY_PATTERN, Placement, RangeRun

__all__ = [
    "KERNEL_ERROR_EXIT",
    "ExhaustiveRecord",
    "Outcome",
    "build_record",
    "proof_domain",
    "run_exhaustive",
    "worker_lost",
]

KERNEL_ERROR_EXIT = 4


@dataclass(frozen=True)
class ExhaustiveRecord:
    """The verdict of comparing encoders ``a`` and ``b`` over a pattern range.

    ``mismatches`` counts disagreements outside the NaN-code class;
    ``nan_code_mismatches`` counts those inside it. ``nan_code_unexplained``
    counts patterns where a side's NaN code is not the one of the policy it is
    held to: the requested one, or, for ``nan_code_exempt_side``, its fixed
    ``nan_code_exempt_policy``. ``fault`` is set when ``status`` is ``kernel-error``.
    ``covered`` lists the pattern ranges the returned chunks examined, merged;
    ``coverage_error`` says why they do not tile ``[start, stop)`` exactly once
    (then ``status`` is FAIL). ``executor`` names where the chunks ran.
    ``fp_env_changed`` names what a user's encoder left changed in the
    floating-point environment (its process's rounding mode, flush-to-zero),
    empty if nothing; it is a finding, a FAIL only under ``strict_env``.
    ``fp_env_read`` says how it was read (``ptrace``, from outside the
    encoder's process, or ``self-reported``; ``""``: no user encoder), and
    ``isolation`` how a user encoder's process was isolated (``namespace`` or
    ``process``; ``""``: none ran).
    """

    a: str
    b: str
    format: str
    saturate: bool
    nan: str
    start: int
    stop: int
    examined: int
    mismatches: int
    nan_code_mismatches: int
    mismatches_by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]
    policy_notes: dict[str, str]
    chunks: int
    workers: int
    wall_seconds: float
    status: ProofStatus = field(default=ProofStatus.FAIL)
    nan_code_unexplained: int = 0
    nan_code_exempt_side: str | None = None
    nan_code_exempt_policy: str | None = None
    fault: str = ""
    covered: list[list[str]] = field(default_factory=list)
    coverage_error: str = ""
    executor: str = "processes"
    fp_env_changed: str = ""
    fp_env_read: str = ""
    isolation: str = ""

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def proof_domain(fmt: FormatSpec, start: int, stop: int) -> list[tuple[int, int]]:
    """The sub-ranges of ``[start, stop)`` a proof for ``fmt`` examines, in order."""
    if fmt.nan_codes:
        return [(start, stop)]
    out, lo = [], start
    for nan_lo, nan_hi in NAN_PATTERN_RANGES:
        if lo < min(nan_lo, stop):
            out.append((lo, min(nan_lo, stop)))
        lo = max(lo, nan_hi)
    if lo < stop:
        out.append((lo, stop))
    return out


def run_exhaustive(
    a: str,
    b: str,
    fmt: str,
    *,
    saturate: bool,
    nan: str = "canonical",
    run: RangeRun = EVERY_PATTERN,
    strict_env: bool = False,
) -> ExhaustiveRecord:
    """Compare encoders ``a`` and ``b`` on every float32 pattern of ``run``'s range.

    Args:
        a: encoder name (see ``BUILTIN_ENCODERS``) or ``MODULE:FUNC``.
        b: the other encoder.
        fmt: format name.
        saturate: overflow policy both sides are asked for.
        nan: NaN policy both sides are asked for; ``any``: every NaN code is the
            same NaN (the sides are asked for the canonical one).
        run: the patterns (default all 2**32), chunks and where they run.
        strict_env: FAIL a user's encoder that leaves the floating-point
            environment changed (by default the record names the change).

    Raises:
        EncoderError: if an encoder cannot be resolved (checked before any work).
        ValueError: for an empty or out-of-range pattern range, or a policy
            the format cannot take (``saturate=False`` without inf or NaN).
    """
    start, stop = run.bounds()
    spec = get_format(fmt)
    special_codes(spec, saturate=saturate, nan=asked_nan(nan))  # refuses a policy it cannot take
    ranges = proof_domain(spec, start, stop)
    for name in (a, b):
        resolve_encoder(name, spec.name, saturate, nan)
    bounds = run.chunks(ranges)
    place = run.placement()
    report = run.reporter(f"exhaustive {a} vs {b} {spec.name} sat={saturate}", len(bounds))
    t0 = time.monotonic()
    args = [(a, b, spec.name, saturate, nan, lo, hi) for lo, hi in bounds]
    try:
        results = run_tasks(
            compare_chunk, args, workers=place.workers, executor=place.executor, report=report
        )
    except WorkerLostError as exc:
        results = []
        fault = worker_lost(a, b, exc)
    else:
        fault = ""
    done = Outcome(results, fault, round(time.monotonic() - t0, 3))
    return build_record(a, b, spec, saturate, nan, (start, stop), done, place, strict_env)


def worker_lost(a: str, b: str, exc: WorkerLostError) -> str:
    """The fault of a proof whose worker process died."""
    return f"a worker process died while running {a!r} vs {b!r} ({exc})"


@dataclass(frozen=True)
class Outcome:
    """What a proof's chunks returned, a fault that stopped them, and the wall time."""

    results: list[ChunkResult]
    fault: str
    wall_seconds: float


def build_record(
    a: str,
    b: str,
    spec: FormatSpec,
    saturate: bool,
    nan: str,
    span: tuple[int, int],
    done: Outcome,
    place: Placement,
    strict_env: bool = False,
) -> ExhaustiveRecord:
    """The record of comparing ``a`` and ``b`` on ``span`` from its chunks' results."""
    start, stop = span
    ranges = proof_domain(spec, start, stop)
    notes = {n: resolve_encoder(n, spec.name, saturate, nan).policy_note for n in (a, b)}
    exempt = exempt_sides(a, b, spec.name, saturate, nan)
    results = done.results
    merged = merge_chunks(results)
    fault = done.fault or merged.fault
    changed = "; ".join(merged.fp_env_changed)
    covered: list[list[str]] = []
    coverage_error = ""
    if not fault:
        try:
            ran = ((r.start, r.start + r.examined) for r in results)
            covered = covered_domain(ran, ranges)
        except CoverageError as exc:
            coverage_error = str(exc)
    by_class = dict(merged.by_class)
    nan_codes = by_class.pop("nan_code")
    mismatches = sum(by_class.values())
    unexplained = merged.nan_code_unexplained
    if fault:
        status = ProofStatus.KERNEL_ERROR
    elif (
        not coverage_error
        and merged.examined == sum(hi - lo for lo, hi in ranges) > 0
        and mismatches == unexplained == 0
        and not (strict_env and changed)
    ):
        status = ProofStatus.PASS
    else:
        status = ProofStatus.FAIL
    return ExhaustiveRecord(
        a=a,
        b=b,
        format=spec.name,
        saturate=saturate,
        nan=nan,
        start=start,
        stop=stop,
        examined=merged.examined,
        mismatches=mismatches,
        nan_code_mismatches=nan_codes,
        mismatches_by_class=by_class,
        examples=merged.examples,
        policy_notes=notes,
        chunks=len(results),
        workers=place.workers,
        wall_seconds=done.wall_seconds,
        status=status,
        nan_code_unexplained=merged.nan_code_unexplained,
        nan_code_exempt_side=", ".join(name for name, _ in exempt) or None,
        nan_code_exempt_policy=", ".join(policy for _, policy in exempt) or None,
        fault=fault,
        covered=covered,
        coverage_error=coverage_error,
        executor=place.name,
        fp_env_changed=changed,
        fp_env_read=_weakest(merged.fp_env_read, ("self-reported", "ptrace")),
        isolation=_weakest(_isolations(a, b, spec.name, saturate, nan), ("process", "namespace")),
    )


def _weakest(found: tuple[str, ...], order: tuple[str, ...]) -> str:
    """The first of ``order`` that ``found`` holds (the weakest claim), or ``""``."""
    return next((level for level in order if level in found), "")


def _isolations(a: str, b: str, fmt: str, saturate: bool, nan: str) -> tuple[str, ...]:
    """How each user encoder's process (this process's host of it) is isolated."""
    hosts = (resolve_encoder(n, fmt, saturate, nan).host for n in (a, b))
    return tuple(host.isolation for host in hosts if host is not None)
