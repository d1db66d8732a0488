"""The ``fp8lab`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fp8lab.cli import (
    bench_cmd,
    design_cmd,
    detect_cmd,
    evidence_cmd,
    exhaustive_cmd,
    gates_cmd,
    gemm_cmd,
    mutate_cmd,
    order_cmd,
    prove_cmd,
    sweep_cmd,
)
from fp8lab.cli.common import CliError

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="fp8lab", description="FP8 verification workbench")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (
        gates_cmd,
        exhaustive_cmd,
        bench_cmd,
        prove_cmd,
        evidence_cmd,
        mutate_cmd,
        detect_cmd,
        sweep_cmd,
        design_cmd,
        gemm_cmd,
        order_cmd,
    ):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; usage errors print to stderr and exit 2."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"fp8lab {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
