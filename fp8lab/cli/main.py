"""The ``fp8lab`` command line."""

from __future__ import annotations

import argparse
import signal
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
    prove_cmd,
    sweep_cmd,
)
from fp8lab.cli.common import CliError
from fp8lab.proctree import SignalInterrupt, install_signal_handlers

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
    ):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; usage errors print to stderr and exit 2.

    SIGINT and SIGTERM unwind the command (its worker pools and notebook
    trees are ended on the way out) and exit 130 and 143.
    """
    args = build_parser().parse_args(argv)
    restore = install_signal_handlers()
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"fp8lab {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt as exc:
        stop = exc if isinstance(exc, SignalInterrupt) else SignalInterrupt(signal.SIGINT)
        print(f"fp8lab {args.command}: {stop}", file=sys.stderr)
        return stop.exit_status
    finally:
        restore()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
