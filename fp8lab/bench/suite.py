"""``fp8lab bench --all``: every benchmark figure, as ratios measured in one run.

- brute force at one scale over ``[0, stop)`` (all 2**32 by default), fused
  engine against its numpy twin (:func:`fp8lab.bench.brute.bench_brute`);
- the encoder's throughput against ml_dtypes, torch's CPU cast (a row saying
  ``absent`` when torch cannot be imported) and the float32 -> uint8 copy ceiling;
- ``fp8lab --help`` and ``fp8lab bench --help`` wall time against the bare
  interpreter start;
- ``make evidence`` and ``make test``, too long to run here, as the components
  that explain their time (:mod:`fp8lab.bench.costs`).

Nothing here is asserted on: the figures are printed and written as JSON.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fp8lab.bench.brute import bench_brute
from fp8lab.bench.costs import WINDOWS, command_seconds, evidence_costs, suite_costs
from fp8lab.bench.encoders import BASELINE, CEILING, TORCH, bench_input, run_bench
from fp8lab.bench.host import host_facts, host_lines
from fp8lab.runtime.timing import best_of
from fp8lab.specs.formats import FORMATS
from fp8lab.sweeps.range_run import ALL_PATTERNS

__all__ = ["SCHEMA", "TARGETS", "bench_all", "summary_lines", "torch_cast_row"]

SCHEMA = "fp8lab-bench-all/1"

# The speed targets, in seconds (evidence and test: make evidence, make test).
TARGETS = {"brute": 3.0, "help": 0.5, "evidence": 300.0, "test": 180.0}
HELP_COMMANDS: dict[str, list[str]] = {
    "python -c pass (interpreter start)": ["-c", "pass"],
    "fp8lab --help": ["-m", "fp8lab", "--help"],
    "fp8lab bench --help": ["-m", "fp8lab", "bench", "--help"],
}


def torch_cast_row(n: int, repeats: int, seed: int) -> dict[str, Any]:
    """Torch's CPU float32 -> float8_e4m3fn cast on the bench input, or a row saying absent."""
    try:
        import torch
    except ImportError as exc:
        return {"name": TORCH, "absent": True, "reason": f"torch not importable ({exc.name})"}
    x = torch.from_numpy(bench_input(n, seed))
    torch.set_num_threads(1)
    seconds = best_of(lambda: x.to(torch.float8_e4m3fn), repeats)
    return {"name": TORCH, "absent": False, "seconds": seconds, "melem_per_s": n / seconds / 1e6}


def _encoders(n: int, repeats: int, seed: int) -> list[dict[str, Any]]:
    rows = [asdict(r) for r in run_bench(n, repeats, seed, include_slow=False).rows]
    if not any(r["name"] == TORCH for r in rows):
        rows.append(torch_cast_row(n, repeats, seed))
    base = next(r for r in rows if r["name"] == BASELINE)["seconds"]
    ceiling = next(r for r in rows if r["name"] == CEILING)["seconds"]
    for row in rows:
        row.setdefault("absent", False)
        if not row["absent"]:
            row["vs_ml_dtypes_clip"] = base / row["seconds"]
            row["vs_copy_ceiling"] = ceiling / row["seconds"]
    return rows


def _help(repeats: int) -> list[dict[str, Any]]:
    seconds = {name: command_seconds(argv, repeats) for name, argv in HELP_COMMANDS.items()}
    start = next(iter(seconds.values()))
    return [
        {
            "command": name,
            "seconds": s,
            "vs_interpreter": s / start,
            "vs_target": s / TARGETS["help"],
        }
        for name, s in seconds.items()
    ]


def _brute(scale: float, stop: int, workers: int | None) -> dict[str, Any]:
    b = asdict(bench_brute(scale, stop=stop, workers=workers))
    b["fused_seconds_per_2_32"] = b["fused_seconds"] * ALL_PATTERNS / stop
    b["numpy_seconds_per_2_32"] = b["numpy_seconds"] * ALL_PATTERNS / stop
    b["target_seconds"] = TARGETS["brute"]
    b["fused_over_target"] = b["fused_seconds_per_2_32"] / TARGETS["brute"]
    return b


def bench_all(
    *,
    stop: int = ALL_PATTERNS,
    sample: int = 1 << 27,
    n: int = 1 << 24,
    repeats: int = 5,
    seed: int = 2024,
    scale: float = 0.9,
    startup: bool = True,
    results: Path = Path("results"),
    workers: int | None = None,
) -> dict[str, Any]:
    """Measure every figure; a JSON-ready dict (fields in docs/performance.md).

    Args:
        stop: patterns of the brute-force and proof-pass figures, from 0 (all 2**32
            by default); per-2**32 figures are scaled by ``2**32 / stop``.
        sample: patterns per proof of the plan sample (32 seeded stratified windows).
        n: elements of the encoder throughput input.
        repeats: interleaved rounds of the encoder figure (medians kept); timings per
            command (the best kept).
        seed: seed of the encoder input.
        scale: the brute-force scale.
        startup: also time a notebook kernel start, a dask LocalCluster start and
            the test collection (seconds each); False leaves them out.
        results: where the published runs are read from (never written).
        workers: processes (threads for the fused engine) of the brute-force and
            proof-pass figures; default one per core.

    Raises:
        ValueError: for a range outside 2**32 or an invalid scale.
    """
    if not 0 < stop <= ALL_PATTERNS or not WINDOWS <= sample <= ALL_PATTERNS:
        raise ValueError(
            f"--stop {stop:#x} or --sample {sample:#x} outside [{WINDOWS}, 2**32] "
            f"(the sample has {WINDOWS} windows)"
        )
    t0 = time.monotonic()
    load_start = os.getloadavg()
    brute = _brute(scale, stop, workers)
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "stop": stop,
        "sample": sample,
        "n": n,
        "repeats": repeats,
        "seed": seed,
        "format": FORMATS["e4m3fn"].name,
        "cpus": len(os.sched_getaffinity(0)),
        "brute": brute,
        "encoders": _encoders(n, repeats, seed),
        "help": _help(repeats),
    }
    payload["evidence"] = evidence_costs(
        stop=stop,
        sample=sample,
        workers=workers,
        results=results,
        target=TARGETS["evidence"],
    )
    interpreter = payload["help"][0]["seconds"]
    payload["test"] = suite_costs(
        interpreter, repeats=repeats, startup=startup, target=TARGETS["test"]
    )
    payload["host"] = host_facts()
    payload["load_average_start"] = [round(v, 2) for v in load_start]
    payload["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    payload["bench_seconds"] = time.monotonic() - t0
    return payload


def _s(x: float | None) -> str:
    return "not measured" if x is None else f"{x:.3g} s"


def summary_lines(p: dict[str, Any]) -> list[str]:
    """The figures of :func:`bench_all` as printed lines, ratios first."""
    b, ev, t = p["brute"], p["evidence"], p["test"]
    lines = [
        *host_lines(p["host"]),
        f"load average at start {p['load_average_start']}, at end {p['load_average_end']}; "
        f"{p['cpus']} cpus",
        f"brute force s={b['scale']!r} over [0, {p['stop']:#x}): fused {b['fused_seconds']} s, "
        f"numpy twin {b['numpy_seconds']} s (numpy/fused x{b['numpy_over_fused']}); "
        f"per 2**32: fused {_s(b['fused_seconds_per_2_32'])} = "
        f"{b['fused_over_target']:.2f} x the {b['target_seconds']:g} s target; "
        f"records equal: {b['records_equal']}",
    ]
    torch = next(
        (r for r in p["encoders"] if r["name"].startswith("torch") and not r["absent"]), None
    )
    for r in p["encoders"]:
        if r["absent"]:
            lines.append(f"encoder {r['name']}: absent ({r['reason']})")
        else:
            against = (
                f", x{r['melem_per_s'] / torch['melem_per_s']:.2f} torch's cast" if torch else ""
            )
            lines.append(
                f"encoder {r['name']}: {r['melem_per_s']:.1f} M elem/s, "
                f"x{r['vs_ml_dtypes_clip']:.2f} ml_dtypes+clip, "
                f"x{r['vs_copy_ceiling']:.3f} the copy ceiling{against}"
            )
    for h in p["help"]:
        lines.append(
            f"{h['command']}: {_s(h['seconds'])}, x{h['vs_interpreter']:.2f} the interpreter "
            f"start, {h['vs_target']:.2f} x the {TARGETS['help']:g} s target"
        )
    pp = ev["proof_pass"]
    lines.append(
        f"evidence: one proof pass ({pp['proof']}, {pp['workers']} workers) "
        f"{_s(pp['seconds_per_2_32'])} per 2**32; proof plan {_s(ev['plan_seconds_per_2_32'])} "
        f"per 2**32 (sampled, {len(ev['plan_sample'])} proofs in shared passes; "
        f"{_s(ev['plan_each_seconds_per_2_32'])} one at a time); MX plan "
        f"{_s(ev['mx_plan_seconds_per_2_32'])} per 2**32 (shared passes)"
    )
    for c in ev["components"]:
        lines.append(f"  {c['component']}: {c['passes']} passes, {_s(c['seconds'])}")
    lines.append(
        f"  modelled 2**32 work {_s(ev['modelled_seconds'])} = "
        f"{ev['modelled_over_target']:.2f} x the {ev['target_seconds']:g} s target; "
        f"published runs' wall time {_s(ev['published_seconds'])} "
        f"({len(ev['published'])} runs)"
    )
    for r in ev["published"]:
        lines.append(f"  published {r['kind']}: {_s(r['seconds'])} ({r['run_id']})")
    lines.append(
        f"test: interpreter {_s(t['interpreter_seconds'])}, numeric import "
        f"{_s(t['numeric_import_seconds'])}, notebook kernel {_s(t['notebook_kernel_seconds'])}, "
        f"LocalCluster {_s(t['cluster_start_seconds'])}, collection "
        f"{_s(t['collect_seconds'])} ({t['tests_collected']} tests); target "
        f"{t['target_seconds']:g} s"
    )
    sites = ", ".join(f"{k} {v}" for k, v in t["files_by_cost"].items())
    lines.append(
        f"  of {t['test_files']} test files: {sites}; {t['files_with_slow_tests']} with slow tests"
    )
    return lines
