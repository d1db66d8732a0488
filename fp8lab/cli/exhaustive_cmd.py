"""``fp8lab exhaustive A B``: compare two encoders on every float32 bit pattern."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from fp8lab.cli.argtypes import pattern_arg, workers_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.isolation_args import add_isolation_arguments, set_kernel_timeout
from fp8lab.cli.names import (
    ALL_PATTERNS,
    ANY_NAN,
    BUILTIN_ENCODERS,
    CODEC_NAN_POLICIES,
    KERNEL_ERROR_EXIT,
)
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES
from fp8lab.runtime.progress import Progress
from fp8lab.specs.formats import FORMATS

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "exhaustive",
        help="compare two encoders over all 2**32 inputs",
        description="A MODULE:FUNC encoder runs in a process of its own; fp8lab never imports it.",
    )
    p.add_argument(
        "a",
        help=f"encoder: {', '.join(BUILTIN_ENCODERS)} or MODULE:FUNC "
        "(given fmt/format, saturate, nan as keywords if it takes them)",
    )
    p.add_argument("b", help="the other encoder")
    p.add_argument(
        "--format", default="e4m3fn", choices=sorted(FORMATS), help="format (fp8 or OCP MX)"
    )
    p.add_argument(
        "--policy", required=True, choices=("sat", "nosat"), help="overflow: saturate or not"
    )
    p.add_argument(
        "--nan",
        default="canonical",
        choices=(*CODEC_NAN_POLICIES, ANY_NAN),
        help="the NaN codes the encoders must emit: canonical (the format's positive quiet "
        "NaN: e4m3fn 0x7F, e5m2 0x7E), keep-sign (its sign kept), all-ones (every "
        "magnitude bit set: e5m2 0x7F) or keep-sign-all-ones; any: every NaN code is the "
        "same NaN (the encoders are asked for canonical, none is held to it)",
    )
    p.add_argument(
        "--start", type=pattern_arg, default=0, help="first bit pattern (e.g. 0x3f800000)"
    )
    p.add_argument(
        "--stop", type=pattern_arg, default=ALL_PATTERNS, help="one past the last pattern"
    )
    p.add_argument(
        "--workers", type=workers_arg, default=None, help="processes (default: one per core)"
    )
    add_executor_args(p)
    add_isolation_arguments(p)
    p.add_argument("--json", "--out", dest="json", help="write the record here ('-' for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison, print a summary, return the exit status."""
    from fp8lab.gates.records import ProofStatus
    from fp8lab.sweeps.encoders import EncoderError
    from fp8lab.sweeps.exhaustive import run_exhaustive
    from fp8lab.sweeps.range_run import RangeRun

    set_kernel_timeout(args.kernel_timeout)
    try:
        foreign = ":" in args.a or ":" in args.b  # a user's MODULE:FUNC encoder
        with open_executor(args, foreign=foreign) as cluster:
            record = run_exhaustive(
                args.a,
                args.b,
                args.format,
                saturate=args.policy == "sat",
                nan=args.nan,
                run=RangeRun(
                    start=args.start,
                    stop=args.stop,
                    workers=cluster.workers if cluster else args.workers,
                    executor=cluster.executor if cluster else None,
                    executor_name=cluster.name if cluster else "processes",
                    progress=None if args.quiet else Progress,
                ),
                strict_env=args.strict_env,
            )
    except (EncoderError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if record.status == ProofStatus.KERNEL_ERROR:
        print(f"fp8lab exhaustive: {ProofStatus.KERNEL_ERROR}: {record.fault}", file=sys.stderr)
        write_json_output(args.json, asdict(record))
        return KERNEL_ERROR_EXIT
    print(
        f"{record.a} vs {record.b} {record.format} policy={args.policy} nan={record.nan}: "
        f"{record.status}"
    )
    print(
        f"  examined {record.examined} patterns [{record.start:#x}, {record.stop:#x}) "
        f"in {record.wall_seconds} s on {record.workers} workers ({record.executor})"
    )
    if record.coverage_error:
        print(f"  coverage: {record.coverage_error}")
    print(f"  mismatches {record.mismatches} {record.mismatches_by_class}")
    if record.fp_env_changed:
        strict = " (a FAIL under --strict-env)" if args.strict_env else ""
        print(f"  fp_env_changed: {record.fp_env_changed}{strict}")
    if record.nan == ANY_NAN:
        print(
            f"  NaN-code disagreements {record.nan_code_mismatches} "
            "(nan=any: every NaN code is the same NaN)"
        )
    elif record.nan_code_exempt_side:
        print(
            f"  NaN-code disagreements {record.nan_code_mismatches}, exempt: "
            f"{record.nan_code_exempt_side} has the fixed NaN policy "
            f"{record.nan_code_exempt_policy}, not {record.nan}; "
            f"NaN codes off their side's policy {record.nan_code_unexplained}"
        )
    else:
        print(
            f"  NaN-code disagreements {record.nan_code_mismatches} "
            f"(no side is exempt: each counts as a mismatch)"
        )
    for cls, rows in record.examples.items():
        print(f"  e.g. {cls}: {rows[0]}")
    write_json_output(args.json, asdict(record))
    return EXIT_CODES["pass"] if record.status == "PASS" else EXIT_CODES["fail"]
