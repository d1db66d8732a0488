"""What ``make evidence`` and ``make test`` spend their time on, measured in pieces.

Both are too long to run inside ``fp8lab bench --all``, so their time is
explained by its components:

- evidence: one 2**32 proof pass (fast vs scan, e4m3fn, saturating), every
  proof of :data:`fp8lab.evidence.proofs.PROOF_PLAN` timed alone on a sample and
  scaled to 2**32, the plan's shared pass (what ``fp8lab prove`` runs) and the
  MX plan's (``fp8lab prove --plan mx``) on the same sample, divide_vs_reciprocal's
  brute force at each of its check scales on the same sample, and the number of
  such passes the evidence set makes, counted from their sources (the
  Makefile's two ``fp8lab prove`` runs, the notebooks, the justified mutants).
  The published runs' own wall times are read beside them.
- test: its start-up costs, with how many test files pay each
  (:mod:`fp8lab.bench.startup`, re-exported here).
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from fp8lab.bench.startup import command_seconds, suite_costs
from fp8lab.evidence.proofs import MX_PROOF_PLAN, PROOF_PLAN, Proof
from fp8lab.runtime.locations import notebooks_dir
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.plan_chunks import compare_plan_chunk
from fp8lab.sweeps.range_run import ALL_PATTERNS, RangeRun

__all__ = ["command_seconds", "evidence_costs", "evidence_passes", "suite_costs"]

NOTEBOOKS = notebooks_dir()
WINDOWS = 32  # strata of 2**27 patterns, one window drawn in each
WINDOW_SEED = 2026  # where each window lies in its stratum


def _notebook_source(name: str) -> str:
    """Every code cell of ``notebooks/NAME.ipynb`` joined, or '' when it is absent."""
    path = NOTEBOOKS / f"{name}.ipynb"
    if not path.exists():
        return ""
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _check_scale_values() -> list[float]:
    """The scales divide_vs_reciprocal brute-forces over all 2**32 at its defaults."""
    from fp8lab.evidence.execute import notebook_parameters

    path = NOTEBOOKS / "divide_vs_reciprocal.ipynb"
    if "crosscheck(" not in _notebook_source(path.stem):
        return []
    return [float(s) for s in notebook_parameters(path).get("check_scales", [])]


def _check_scales() -> int:
    """How many scales divide_vs_reciprocal brute-forces over all 2**32 at its defaults."""
    return len(_check_scale_values())


def _recheck_targets() -> list[Any]:
    """The mutation notebook's re-check comparisons over all 2**32 (an upper bound).

    Every justified equivalent (mutants/equivalent.toml) is planned as the
    re-check plans it (``fp8lab.mutants.equivalence``); a survivor that is not
    justified is not re-checked.
    """
    if "mutation_report(" not in _notebook_source("mutation"):
        return []
    from fp8lab.mutants.equivalence import sweep_targets
    from fp8lab.mutants.runner import load_equivalents

    return [t for key, entry in load_equivalents().items() for t in sweep_targets(key, entry)]


def _windows(sample: int) -> tuple[int, list[int]]:
    """Width and starts of :data:`WINDOWS` windows holding ``sample`` patterns in all.

    One window lies in each of as many equal strata of the 2**32 patterns, at a
    seeded uniform offset, so every pattern is equally likely to be timed: the
    float32 subnormals (2**24 patterns, slow for float arithmetic on some CPUs)
    and the NaNs weigh what they weigh in a whole pass. Windows at the strata's
    starts would time the subnormals 32 times too often and the NaNs never.
    At the default sample a window is one chunk of the real passes (2**22
    patterns): smaller windows allocate smaller arrays, and their page faults
    (system time, counted here) come out lower and far less steady than a
    whole pass's.
    """
    import numpy as np

    width = max(1, sample // WINDOWS)
    stratum = ALL_PATTERNS // WINDOWS
    offsets = np.random.default_rng(WINDOW_SEED).integers(0, stratum - width + 1, WINDOWS)
    return width, [i * stratum + int(o) for i, o in enumerate(offsets)]


def _recheck_sample(targets: list[Any], sample: int) -> float:
    """CPU seconds per 2**32 of the re-check sweep chunk (all targets share each chunk)."""
    if not targets:
        return 0.0
    from fp8lab.mutants.equivalence import sweep_chunk

    width, starts = _windows(sample)
    by_scale: dict[float, list[Any]] = {}
    for t in targets:
        by_scale.setdefault(t.scale, []).append(t)
    for group in by_scale.values():  # warm-up: builds and compiles every mutant
        sweep_chunk(tuple(group), starts[1], starts[1] + min(width, 64))
    cpu0 = time.process_time()
    for group in by_scale.values():
        for lo in starts:
            sweep_chunk(tuple(group), lo, lo + width)
    return (time.process_time() - cpu0) * ALL_PATTERNS / (width * WINDOWS)


def _brute_sample(sample: int) -> float:
    """CPU seconds per 2**32 of divide_vs_reciprocal's brute force, summed over its scales.

    Each check scale runs the fused engine (what its ``crosscheck`` runs) on the
    sample windows: how long a scale takes depends on the scale (where its
    rounding boundaries and float32-subnormal results fall), and on the part
    of the patterns timed, so no one scale or prefix of the patterns stands
    for the others.
    """
    from fp8lab.detect.fused import exposing_fused

    scales = _check_scale_values()
    if not scales:
        return 0.0
    width, starts = _windows(sample)
    exposing_fused("reciprocal", "divide", "e4m3fn", scales[0], starts[1], starts[1] + 64)
    cpu0 = time.process_time()
    for scale in scales:
        for lo in starts:
            exposing_fused("reciprocal", "divide", "e4m3fn", scale, lo, lo + width)
    return (time.process_time() - cpu0) * ALL_PATTERNS / (width * WINDOWS)


def evidence_passes() -> dict[str, int]:
    """How many 2**32 passes of each kind ``make evidence`` makes, counted from their sources."""
    source = _notebook_source("codec_atlas")
    # make evidence runs fp8lab prove first; the atlas then shows that run's records
    atlas = "run_plan(PROOF_PLAN" in source and "published_plan_records" not in source
    return {
        "prove_plan_proofs": len(PROOF_PLAN),
        "prove_mx_plan_proofs": len(MX_PROOF_PLAN),  # make evidence runs both plans
        "codec_atlas_plan_proofs": len(PROOF_PLAN) if atlas else 0,
        "divide_vs_reciprocal_brute_scales": _check_scales(),
        "mutation_recheck_comparisons": len(_recheck_targets()),
    }


def _window(proof: Proof, lo: int, width: int) -> int:
    """Run ``proof`` on ``[lo, lo + width)`` in this process; the patterns it examined."""
    return proof.run(run=RangeRun(start=lo, stop=lo + width, chunk=width, workers=1)).examined


def _shared_sample(sample: int, proofs: tuple[Proof, ...] = PROOF_PLAN) -> float:
    """CPU seconds per 2**32 of a plan's shared pass (``run_plan``) on the same windows."""
    width, starts = _windows(sample)
    plan = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in proofs)
    compare_plan_chunk(plan, starts[1], starts[1] + min(width, 4096))  # warm-up
    cpu0 = time.process_time()
    for lo in starts:
        compare_plan_chunk(plan, lo, lo + width)
    return (time.process_time() - cpu0) * ALL_PATTERNS / (width * WINDOWS)


def _plan_sample(sample: int) -> list[dict[str, Any]]:
    """Each proof of the plan alone on the sample windows in this process, scaled to 2**32.

    A warm-up window (not counted) comes first. ``cpu_seconds_per_2_32`` is this
    process's CPU time (robust to other load), ``seconds`` the sample's wall time.
    """
    width, starts = _windows(sample)
    rows = []
    for proof in PROOF_PLAN:
        _window(proof, starts[1], min(width, 4096))
        t0, cpu0 = time.perf_counter(), time.process_time()
        examined = sum(_window(proof, lo, width) for lo in starts)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        rows.append(
            {
                "proof": proof.slug,
                "examined": examined,
                "seconds": seconds,
                "cpu_seconds_per_2_32": cpu * ALL_PATTERNS / (width * WINDOWS),
            }
        )
    return rows


def _seconds(manifest: dict[str, Any]) -> float | None:
    """A run's wall time: its ``seconds``, else ``finished - started``."""
    if "seconds" in manifest:
        return float(manifest["seconds"])
    try:
        started = datetime.fromisoformat(manifest["started"])
        return (datetime.fromisoformat(manifest["finished"]) - started).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _published(results: Path) -> list[dict[str, Any]]:
    """The newest complete non-smoke run of each kind ``make evidence`` makes, with its time.

    The kinds: every notebook, ``proofs`` (``fp8lab prove``'s default plan) and
    ``proofs-mx`` (its MX plan).
    """
    kinds = {p.stem for p in NOTEBOOKS.glob("*.ipynb")} | {"proofs", "proofs-mx"}
    newest: dict[str, dict[str, Any]] = {}
    for manifest in sorted(results.glob("*/*/manifest.json")):
        try:
            m = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        if m.get("kind") not in kinds or m.get("status") != "complete":
            continue
        if (m.get("params") or {}).get("smoke") or _seconds(m) is None:
            continue
        if m.get("finished", "") >= newest.get(m["kind"], {}).get("finished", ""):
            newest[m["kind"]] = m
    return [
        {"kind": k, "run_id": m["run_id"], "seconds": _seconds(m), "finished": m["finished"]}
        for k, m in sorted(newest.items())
    ]


def evidence_costs(
    *,
    stop: int,
    sample: int,
    workers: int | None,
    results: Path,
    target: float,
) -> dict[str, Any]:
    """One proof pass, the plan sample, the passes counted and the modelled total."""
    record = run_exhaustive(
        "fast", "scan", "e4m3fn", saturate=True, run=RangeRun(stop=stop, workers=workers)
    )
    pass_seconds = record.wall_seconds * ALL_PATTERNS / stop
    proof_pass = {
        "proof": "fast-vs-scan-e4m3fn-sat-canonical",
        "examined": record.examined,
        "workers": record.workers,
        "seconds": record.wall_seconds,
        "seconds_per_2_32": pass_seconds,
    }
    plan = _plan_sample(sample)
    cpus = len(os.sched_getaffinity(0))
    plan_each = sum(r["cpu_seconds_per_2_32"] for r in plan) / cpus
    plan_wall = _shared_sample(sample) / cpus
    mx_wall = _shared_sample(sample, MX_PROOF_PLAN) / cpus
    passes = evidence_passes()
    recheck_cpu = _recheck_sample(_recheck_targets(), sample)
    brute_cpu = _brute_sample(sample)
    components: list[dict[str, Any]] = [
        {
            "component": "fp8lab prove: PROOF_PLAN over 2**32 (Makefile)",
            "passes": passes["prove_plan_proofs"],
            "seconds": plan_wall,
        },
        {
            "component": "fp8lab prove --plan mx: MX_PROOF_PLAN over 2**32 (Makefile)",
            "passes": passes["prove_mx_plan_proofs"],
            "seconds": mx_wall,
        },
        {
            "component": "codec_atlas: run_plan(PROOF_PLAN) over 2**32 "
            "(0 under make evidence, which runs prove first; fp8lab evidence alone proves them)",
            "passes": passes["codec_atlas_plan_proofs"],
            "seconds": plan_wall if passes["codec_atlas_plan_proofs"] else 0.0,
        },
        {
            "component": "divide_vs_reciprocal: brute force at each check scale (fused, sampled)",
            "passes": passes["divide_vs_reciprocal_brute_scales"],
            "seconds": brute_cpu / cpus,
        },
        {
            "component": "mutation: re-check sweep of justified mutants (sampled)",
            "passes": passes["mutation_recheck_comparisons"],
            "seconds": recheck_cpu / cpus,
        },
    ]
    modelled = sum(c["seconds"] for c in components)
    published = _published(results)
    return {
        "proof_pass": proof_pass,
        "plan_sample": plan,
        "plan_seconds_per_2_32": plan_wall,
        "mx_plan_seconds_per_2_32": mx_wall,
        "plan_each_seconds_per_2_32": plan_each,
        "recheck_cpu_seconds_per_2_32": recheck_cpu,
        "brute_cpu_seconds_per_2_32": brute_cpu,
        "passes": passes,
        "components": components,
        "modelled_seconds": modelled,
        "published": published,
        "published_seconds": sum(r["seconds"] for r in published),
        "target_seconds": target,
        "modelled_over_target": modelled / target,
    }
