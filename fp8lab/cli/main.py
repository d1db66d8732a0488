"""The ``fp8lab`` command line."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from fp8lab.cli import (
    bench_cmd,
    chains_cmd,
    design_cmd,
    detect_cmd,
    evidence_cmd,
    exhaustive_cmd,
    export_cmd,
    gates_cmd,
    gemm_cmd,
    mutate_cmd,
    order_cmd,
    prove_cmd,
    sweep_cmd,
)
from fp8lab.cli.argtypes import check_json_target
from fp8lab.cli.common import CliError, json_on_stdout
from fp8lab.gates import EXIT_CODES
from fp8lab.proctree import SignalInterrupt, install_signal_handlers

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """A parser whose refusals are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand."""
    parser = _Parser(prog="fp8lab", description="FP8 verification workbench")
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
        export_cmd,
        chains_cmd,
    ):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; usage errors print one line to stderr and exit 2.

    A ``--json`` target is checked before the subcommand starts; with
    ``--json -`` stdout holds only the JSON and everything else goes to stderr.
    SIGINT and SIGTERM unwind the command (its worker pools and notebook
    trees are ended on the way out) and exit 130 and 143.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # a refused argument (2) or --help (0): already printed
        return exc.code if isinstance(exc.code, int) else EXIT_CODES["usage"]
    json_path = getattr(args, "json", None)
    restore = install_signal_handlers()
    try:
        reason = check_json_target(json_path)
        if reason:
            raise CliError(reason)
        if json_path == "-":
            with json_on_stdout():
                return int(args.run(args))
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
