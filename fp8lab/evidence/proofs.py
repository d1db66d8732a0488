"""The proof plan ``make evidence`` runs: gates on the built-ins and exhaustive proofs.

The fast codec's table is filled by the array twin, so the plan also proves the
array twin itself against the scan reference on all 2**32 inputs. The bit-field
engine (``fast-bits``) is proved against the scan reference on its own, in every
format and overflow policy the table is. A proof against
ml_dtypes or the ``F32ToFp8`` port under the other NaN policy exempts that side's
NaN codes, and its record names it (``nan_code_exempt_side``).

:data:`PROOF_PLAN` covers the fp8 element formats (:data:`FP8_FORMATS`).
:data:`MX_PROOF_PLAN` proves the OCP MX formats (e8m0fnu, e2m1fn, e2m3fn,
e3m2fn) the same way; it is a separate plan because of its cost
(docs/rules.md, "Formats beyond fp8", gives the measured time and the command).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.manifest import scan_runs
from fp8lab.evidence.provenance import code_hash, pins_hash
from fp8lab.evidence.staleness import PROOFS, differs_for, judge
from fp8lab.gates import GateStatus, run_g1, run_g2
from fp8lab.gates.cuda_compare import CUDA_GATE_CPU_KERNEL
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.runtime.cluster import Cluster, ambient_cluster
from fp8lab.runtime.parallel import default_workers, worker_pool
from fp8lab.runtime.progress import Progress
from fp8lab.specs.formats import FORMATS, FP8_FORMATS
from fp8lab.sweeps.exhaustive import ExhaustiveRecord, run_exhaustive
from fp8lab.sweeps.exhaustive_plan import run_shared
from fp8lab.sweeps.range_run import ALL_PATTERNS, EVERY_PATTERN, RangeRun

__all__ = [
    "MX_PROOF_PLAN",
    "PLANS",
    "PROOF_PLAN",
    "Proof",
    "ProofsRunError",
    "published_plan_records",
    "run_plan",
    "run_plan_each",
    "run_proofs",
]


@dataclass(frozen=True)
class Proof:
    """One exhaustive comparison: encoders, format and policy."""

    a: str
    b: str
    format: str
    saturate: bool
    nan: str

    @property
    def slug(self) -> str:
        """File-name-safe id."""
        policy = "sat" if self.saturate else "nosat"
        return f"{self.a}-vs-{self.b}-{self.format}-{policy}-{self.nan}"

    def run(self, run: RangeRun = EVERY_PATTERN) -> ExhaustiveRecord:
        """This proof by :func:`fp8lab.sweeps.exhaustive.run_exhaustive` over ``run``'s range."""
        return run_exhaustive(
            self.a, self.b, self.format, saturate=self.saturate, nan=self.nan, run=run
        )


PROOF_PLAN: tuple[Proof, ...] = (
    *(Proof("fast", "scan", f, sat, "canonical") for f in FP8_FORMATS for sat in (True, False)),
    *(
        Proof("fast-bits", "scan", f, sat, "canonical")
        for f in FP8_FORMATS
        for sat in (True, False)
    ),
    Proof("fast-numpy", "scan", "e4m3fn", True, "canonical"),
    Proof("array", "scan", "e4m3fn", True, "canonical"),
    Proof("fast", "f32tofp8", "e4m3fn", True, "canonical"),
    *(Proof("fast", "ml_dtypes", f, False, "keep-sign") for f in FP8_FORMATS),
    Proof("fast", "ml_dtypes", "e4m3fn", False, "canonical"),
    Proof("fast", "ml_dtypes", "e4m3fn", True, "keep-sign"),
    Proof("fast", "ml_dtypes", "e5m2", True, "keep-sign"),
)

_MX = tuple(f for f in FORMATS.values() if f.name not in FP8_FORMATS)

MX_PROOF_PLAN: tuple[Proof, ...] = (
    # ml_dtypes saturates where a format has neither inf nor NaN, and not elsewhere.
    *(
        Proof("fast", "scan", f.name, sat, "canonical")
        for f in _MX
        for sat in ((True, False) if f.nan_codes else (True,))
    ),
    *(
        Proof("fast-bits", "scan", f.name, sat, "canonical")
        for f in _MX
        for sat in ((True, False) if f.nan_codes else (True,))
    ),
    *(Proof("array", "scan", f.name, not f.nan_codes, "canonical") for f in _MX),
    *(Proof("fast", "ml_dtypes", f.name, not f.nan_codes, "keep-sign") for f in _MX),
)

PLANS: dict[str, tuple[Proof, ...]] = {"default": PROOF_PLAN, "mx": MX_PROOF_PLAN}


def run_plan(
    plan: tuple[Proof, ...] = PROOF_PLAN,
    *,
    start: int = 0,
    stop: int = ALL_PATTERNS,
    progress: bool = False,
    cluster: Cluster | None = None,
) -> list[ExhaustiveRecord]:
    """Run every proof of ``plan`` on the patterns ``[start, stop)``, in shared passes.

    Each chunk evaluates each distinct encoder side once for all the proofs
    that use it (:func:`fp8lab.sweeps.exhaustive_plan.run_shared`); the records
    are :func:`run_plan_each`'s except ``wall_seconds``, the shared pass's.

    Args:
        plan: the proofs.
        start: first bit pattern of every proof.
        stop: one past the last pattern (all 2**32 by default).
        progress: show a progress bar per pass on stderr.
        cluster: run the chunks on this dask cluster (:mod:`fp8lab.runtime.cluster`)
            instead of a local process pool.
    """
    proofs = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in plan)
    with _plan_runs(start, stop, progress, cluster) as run:
        return run_shared(proofs, run)


def run_plan_each(
    plan: tuple[Proof, ...] = PROOF_PLAN,
    *,
    start: int = 0,
    stop: int = ALL_PATTERNS,
    progress: bool = False,
    cluster: Cluster | None = None,
) -> list[ExhaustiveRecord]:
    """:func:`run_plan`'s slow twin: one :meth:`Proof.run` after another, nothing shared."""
    with _plan_runs(start, stop, progress, cluster) as run:
        return [proof.run(run=run) for proof in plan]


@contextmanager
def _plan_runs(
    start: int, stop: int, progress: bool, cluster: Cluster | None
) -> Iterator[RangeRun]:
    """The range every proof of a plan runs on, with one process pool (or the cluster) for all."""
    cluster = cluster or ambient_cluster()
    workers = cluster.workers if cluster else default_workers()
    with ExitStack() as stack:
        pool: Executor = cluster.executor if cluster else stack.enter_context(worker_pool(workers))
        yield RangeRun(
            start=start,
            stop=stop,
            workers=workers,
            executor=pool,
            executor_name=cluster.name if cluster else "processes",
            progress=Progress if progress else None,
        )


def run_proofs(
    results: Path,
    *,
    stop: int = ALL_PATTERNS,
    quiet: bool = False,
    cluster: Cluster | None = None,
    plan: str = "default",
) -> EvidenceRun:
    """Run a proof plan (and, for the default plan, G1 on every built-in and G2 on ``upstream``).

    Args:
        results: the results root.
        stop: bit patterns examined per proof, from 0 (all 2**32 by default).
        quiet: no progress output.
        cluster: run the proofs' chunks on this dask cluster; the gates run here.
        plan: a key of :data:`PLANS`; ``mx`` files its runs as ``proofs-mx``.

    Returns:
        The finished run (``run.final`` is its directory). With ``stop`` below
        2**32 the run is filed as ``partial`` under ``results/partial/<kind>/``.

    Raises:
        ProofsRunError: if a gate or proof failed, or the run raised; it is
            filed as failed, and the error's ``folder`` says where.
        ValueError: for an unknown plan.
    """
    if plan not in PLANS:
        raise ValueError(f"unknown proof plan {plan!r}; choose from {', '.join(PLANS)}")
    proof_plan = PLANS[plan]
    kind = "proofs" if plan == "default" else f"proofs-{plan}"
    params: dict[str, Any] = {"stop": stop, "plan": [p.slug for p in proof_plan]}
    run = EvidenceRun(results, kind, params, partial=stop < ALL_PATTERNS)
    try:
        _prove(run, plan, proof_plan, stop, quiet, cluster)
    except Exception as exc:
        if run.final is None:
            raise
        folder = run.final.relative_to(results).as_posix()
        raise ProofsRunError(f"{exc} ({folder})", folder) from exc
    return run


class ProofsRunError(RuntimeError):
    """A proofs run that failed; ``folder`` is where it was filed, relative to the results root."""

    def __init__(self, message: str, folder: str) -> None:
        super().__init__(message)
        self.folder = folder


def _prove(
    evidence: EvidenceRun,
    plan: str,
    proof_plan: tuple[Proof, ...],
    stop: int,
    quiet: bool,
    cluster: Cluster | None,
) -> None:
    with evidence as run:
        gates = []
        if plan == "default":
            gates = [run_g1(k) for k in BUILTIN_KERNELS.values()]
            gates.append(run_g2(BUILTIN_KERNELS[CUDA_GATE_CPU_KERNEL]))  # CUDA's quant is upstream
        run.write_json("gates.json", [g.to_dict() for g in gates])
        proofs = run_plan(proof_plan, stop=stop, progress=not quiet, cluster=cluster)
        for proof, record in zip(proof_plan, proofs, strict=True):
            run.write_json(f"exhaustive/{proof.slug}.json", asdict(record))
        run.summary = {
            "gates": {f"{g.gate}/{g.kernel}": g.status.value for g in gates},
            "proofs": {
                p.slug: {
                    "status": r.status,
                    "examined": r.examined,
                    "mismatches": r.mismatches,
                    "nan_code_mismatches": r.nan_code_mismatches,
                    "nan_code_unexplained": r.nan_code_unexplained,
                    "nan_code_exempt_side": r.nan_code_exempt_side,
                    "nan_code_exempt_policy": r.nan_code_exempt_policy,
                    "fault": r.fault,
                    "wall_seconds": r.wall_seconds,
                }
                for p, r in zip(proof_plan, proofs, strict=True)
            },
        }
        failed = [k for k, v in run.summary["gates"].items() if v == GateStatus.FAIL.value]
        failed += [k for k, v in run.summary["proofs"].items() if v["status"] != "PASS"]
        if failed:
            raise RuntimeError(f"failed: {', '.join(failed)}")


def published_plan_records(results: Path) -> tuple[Path, list[ExhaustiveRecord]] | None:
    """The records of the published ``fp8lab prove`` run under ``results``, if it is fresh.

    ``make evidence`` runs ``fp8lab prove`` first; the codec atlas then shows
    these records instead of running the same :data:`PROOF_PLAN` over all
    2**32 patterns a second time. Only a run that ``fp8lab evidence --check``
    would call fresh counts: complete, over all 2**32 patterns, made from the
    current package and pins, its files matching its manifest, no newer attempt
    at those inputs that failed, and of this plan.

    Returns:
        ``(run directory, records in plan order)``, or None when there is no
        such run (then the caller runs the plan itself).
    """
    runs = [r for r in scan_runs(results) if not r.corrupt and r.manifest["kind"] == PROOFS]
    inputs = {"code_hash": code_hash(), "pins_hash": pins_hash()}
    verdict = judge(PROOFS, runs, differs_for(PROOFS, {}), inputs)
    run = verdict.run
    if verdict.status != "fresh" or run is None:
        return None
    if run.manifest["params"].get("plan") != [p.slug for p in PROOF_PLAN]:
        return None
    records = []
    for proof in PROOF_PLAN:
        data = json.loads((run.directory / "exhaustive" / f"{proof.slug}.json").read_text())
        records.append(ExhaustiveRecord(**data))
    return run.directory, records
