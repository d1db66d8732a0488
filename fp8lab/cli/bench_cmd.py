"""``fp8lab bench``: encoder throughput as per-round ratios from one single-threaded run.

``--brute`` adds brute force; ``--all`` every benchmark figure (:mod:`fp8lab.bench.suite`).
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from fp8lab.cli.argtypes import positive_int_arg, scale_arg, seed_arg, stop_arg, workers_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.record_paths import write_json_output

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "bench",
        help="encoder throughput, single-threaded, as ratios to torch's cast and its 2x target",
    )
    p.add_argument(
        "-n",
        "--n",
        dest="n",
        type=positive_int_arg,
        default=1 << 24,
        help="elements (default 2**24)",
    )
    p.add_argument(
        "--repeats",
        "--rounds",
        dest="repeats",
        type=positive_int_arg,
        default=7,
        help="interleaved rounds, each timing every encoder once (default 7); with --all, "
        "timings per figure, best kept",
    )
    p.add_argument("--seed", type=seed_arg, default=2024, help="seed of the random inputs")
    p.add_argument(
        "--brute",
        action="store_true",
        help="also time brute force at one scale over all 2**32 inputs, fused engine "
        "against its numpy twin (about a minute)",
    )
    p.add_argument(
        "--brute-scale",
        type=scale_arg,
        default=0.9,
        help="scale of the --brute figure (default 0.9)",
    )
    p.add_argument(
        "--isolation",
        action="store_true",
        help="also time G1 with its kernel in this process against the kernel in a process of "
        "its own (the default for a user's kernel): the per-call cost of the isolation",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every benchmark figure as ratios from one run: brute force, encoders "
        "against ml_dtypes/torch/copy ceiling, --help against the interpreter start, and the "
        "components of make evidence and make test (minutes at the default sizes)",
    )
    p.add_argument(
        "--stop",
        type=stop_arg,
        default=None,
        help="with --all: patterns of the brute-force and proof-pass figures, from 0 "
        "(default 2**32); figures per 2**32 are scaled",
    )
    p.add_argument(
        "--sample",
        type=stop_arg,
        default=None,
        help="with --all: patterns per proof of the plan sample (default 2**27: 32 chunks)",
    )
    p.add_argument(
        "--no-startup",
        dest="startup",
        action="store_false",
        help="with --all: leave out the notebook kernel, LocalCluster and test collection times",
    )
    p.add_argument(
        "--workers",
        type=workers_arg,
        default=None,
        help="with --all: processes (threads for the fused engine) of the brute-force and "
        "proof-pass figures (default one per core)",
    )
    p.add_argument(
        "--results", default="results", help="with --all: published runs to read (default results)"
    )
    p.add_argument("--json", "--out", dest="json", help="write the rows here ('-' for stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one row per encoder."""
    if args.all:
        return _run_all(args)
    if args.stop is not None or args.sample is not None or not args.startup or args.workers:
        raise CliError("--stop, --sample, --workers and --no-startup go with --all")
    from fp8lab.bench.encoders import rows_to_dicts, run_bench
    from fp8lab.bench.host import host_facts, host_lines

    report = run_bench(args.n, args.repeats, args.seed)
    host = host_facts()
    for line in [*host_lines(host), *report_lines(report)]:
        print(line)
    payload: dict[str, Any] = {
        "host": host,
        "n": args.n,
        "repeats": args.repeats,
        "seed": args.seed,
        "pinned": report.pinned,
        "torch": report.torch,
        "rows": rows_to_dicts(report.rows),
    }
    if args.brute:
        from fp8lab.bench.brute import bench_brute

        try:
            b = bench_brute(args.brute_scale)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        print(
            f"brute force, s={b.scale!r}, all 2**32: fused {b.fused_seconds} s, "
            f"numpy twin {b.numpy_seconds} s, x{b.numpy_over_fused}; {b.exposing} exposing; "
            f"records equal: {b.records_equal}; load average {b.load_average}"
        )
        payload["brute"] = asdict(b)
        if not b.records_equal:
            return 1
    if args.isolation:
        from fp8lab.bench.isolation import bench_isolation

        iso = bench_isolation(args.repeats)
        print(
            f"G1, kernel in-process {iso.in_process_seconds} s, isolated {iso.isolated_seconds} "
            f"s: x{iso.isolated_over_in_process}; {iso.calls} calls, "
            f"{iso.per_call_overhead_ms} ms each; child start {iso.start_seconds} s; "
            f"the whole command {iso.command_in_process_seconds} s against "
            f"{iso.command_isolated_seconds} s isolated: x{iso.command_isolated_over_in_process}; "
            f"one exhaustive chunk ({iso.chunk_patterns} patterns) {iso.chunk_in_process_ms} ms "
            f"in-process, {iso.chunk_isolated_ms} ms isolated: "
            f"x{iso.chunk_isolated_over_in_process}"
        )
        if iso.box:
            print(
                f"the whole command with the kernel in a box ({iso.box}) "
                f"{iso.command_box_seconds} s against {iso.command_process_seconds} s as a "
                f"plain process: x{iso.command_box_over_process}"
            )
        payload["isolation"] = asdict(iso)
    write_json_output(args.json, payload)
    return 0


def report_lines(report: Any) -> list[str]:
    """The bench report as printed lines: the pins, then one row per encoder."""
    torch = f"torch {report.torch}" if report.torch else "torch not installed: no torch ratios"
    lines = [
        f"single-threaded, pinned here: {', '.join(report.pinned)}; {report.rounds} interleaved "
        f"rounds of {report.n} float32 values (seed {report.seed}); {torch}",
        "medians over the rounds; x torch is the median of the per-round ratios "
        "(min-max, interquartile range)",
        f"{'encoder':<40} {'M elem/s':>9} {'x ml_dtypes+clip':>16} {'x torch':>8} "
        f"{'min-max':>11} {'IQR':>11} {'target':>7} {'x target':>8}",
    ]
    for r in report.rows:
        ratio = spread = iqr = target = of_target = "-"
        if r.vs_torch is not None:
            ratio = f"{r.vs_torch:.2f}"
            spread = f"{r.vs_torch_min:.2f}-{r.vs_torch_max:.2f}"
            iqr = f"{r.vs_torch_q1:.2f}-{r.vs_torch_q3:.2f}"
        if r.target_vs_torch is not None:
            target, of_target = f"{r.target_vs_torch:g}x", f"{r.vs_target:.2f}"
        lines.append(
            f"{r.name:<40} {r.melem_per_s:>9.1f} {r.vs_ml_dtypes_clip:>16.2f} {ratio:>8} "
            f"{spread:>11} {iqr:>11} {target:>7} {of_target:>8}"
        )
    return lines


def _run_all(args: argparse.Namespace) -> int:
    """Every benchmark figure; exit 1 if the brute-force engines disagree."""
    if args.brute:
        raise CliError("--all includes --brute")
    from pathlib import Path

    from fp8lab.bench.suite import bench_all, summary_lines
    from fp8lab.sweeps.range_run import ALL_PATTERNS

    stop = ALL_PATTERNS if args.stop is None else args.stop
    try:
        payload = bench_all(
            stop=stop,
            sample=1 << 27 if args.sample is None else args.sample,
            n=args.n,
            repeats=args.repeats,
            seed=args.seed,
            scale=args.brute_scale,
            startup=args.startup,
            results=Path(args.results),
            workers=args.workers,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    for line in summary_lines(payload):
        print(line, flush=True)
    write_json_output(args.json, payload)
    return 0 if payload["brute"]["records_equal"] else 1
