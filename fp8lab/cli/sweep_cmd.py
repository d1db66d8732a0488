"""``fp8lab sweep``: divide-vs-reciprocal exposure over many scales, with its structure."""

from __future__ import annotations

import argparse
import time
from typing import Any

from fp8lab.cli.argtypes import positive_float_arg, positive_int_arg, workers_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES
from fp8lab.specs.formats import FP8_FORMATS

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "sweep",
        help="count divide-vs-reciprocal exposure at many scales",
    )
    p.add_argument("--scales", help="comma-separated scales (default: log-spaced grid)")
    p.add_argument(
        "-n",
        "--n",
        dest="n",
        type=positive_int_arg,
        default=100_000,
        help="log-spaced scales (default 1e5)",
    )
    p.add_argument("--lo", type=positive_float_arg, default=2.0**-20, help="smallest scale")
    p.add_argument("--hi", type=positive_float_arg, default=2.0**20, help="largest scale")
    p.add_argument("--format", default="e4m3fn", choices=sorted(FP8_FORMATS), help="fp8 format")
    p.add_argument(
        "--workers", type=workers_arg, default=None, help="processes (default: one per core)"
    )
    add_executor_args(p)
    p.add_argument(
        "--json",
        "--out",
        dest="json",
        help="write the record and its structure here ('-' for stdout)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Sweep, print the structure, return the exit status."""
    from fp8lab.cli.detect_cmd import scales_arg
    from fp8lab.detect import bf16_exposing, describe_sweep, log_scales, seed_scores, sweep

    try:
        scales = (
            scales_arg(args.scales)
            if args.scales is not None
            else log_scales(args.n, args.lo, args.hi)
        )
        with open_executor(args) as cluster:
            executor = cluster.executor if cluster else None
            record = sweep(scales, executor, fmt=args.format, workers=args.workers)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    facts = describe_sweep(record)
    print(f"swept {record.scales.size} scales in {record.wall_seconds} s")
    print(facts["text"])
    t0 = time.monotonic()
    bf16 = {h: int(bf16_exposing(float.fromhex(h)).size) for h in facts["bf16_exposing_scales"]}
    print(f"bf16 exposing scales (enumeration re-check, {time.monotonic() - t0:.2f} s): {bf16}")
    payload: dict[str, Any] = {"record": record.to_dict(), "structure": facts, "bf16_recheck": bf16}
    if args.scales is not None:
        payload["seed_scores"] = [vars(s) for s in seed_scores(record.scales)]
        for row in payload["seed_scores"]:
            print(
                f"  s={row['scale']!r}: {row['exposing']} exposing, the seed's "
                f"{row['seed_words']} tie+ladder words find {row['seed_found']}"
            )
    write_json_output(args.json, payload)
    return EXIT_CODES["pass"]
