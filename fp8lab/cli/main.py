"""The ``fp8lab`` command line."""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import importlib.metadata
import io
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """A parser whose refusals are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# Each subcommand, its module and its one-line help, in --help order. Only the
# module of the subcommand being run is imported (tests/integration/test_cli_lazy.py
# checks each module registers exactly this name and help).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "gates": ("gates_cmd", "run gates against a kernel"),
    "exhaustive": ("exhaustive_cmd", "compare two encoders over all 2**32 inputs"),
    "bench": (
        "bench_cmd",
        "encoder throughput, single-threaded, as ratios to torch's cast and its 2x target",
    ),
    "prove": ("prove_cmd", "run gates and exhaustive proofs; file the evidence"),
    "evidence": ("evidence_cmd", "run notebooks with papermill and file the evidence"),
    "mutate": ("mutate_cmd", "run mutants against the gates; report kill margins"),
    "detect": ("detect_cmd", "find every float32 input where two kernels differ at given scales"),
    "sweep": ("sweep_cmd", "count divide-vs-reciprocal exposure at many scales"),
    "design": ("design_cmd", "choose scales and the fewest words that kill a mutant kernel"),
    "gemm-bench": (
        "gemm_cmd",
        "GEMM reference and model timings as ratios to np.matmul, one run",
    ),
    "order": ("order_cmd", "infer a kernel's summation tree (FPRev) and name its family"),
    "gemm": (
        "gemm_decl_cmd",
        "list the GEMM declarations, print one as a file, or infer a kernel's",
    ),
    "export": ("export_cmd", "write a gate's inputs as a bundle (fp8lab.bundle/1)"),
    "chains": ("chains_cmd", "list fused-chain recipes, or count where two recipes differ"),
    "rules": (
        "rules_cmd",
        "list the scale rules, print one as a rule file, or infer a kernel's",
    ),
}
USAGE = 2  # EXIT_CODES["usage"], without importing the gates
FAIL = 1  # EXIT_CODES["fail"]


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` asks for: its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or why there is none."""
    try:
        return importlib.metadata.version("fp8lab")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: no package metadata)"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; every subcommand's own arguments, or only ``only``'s.

    The others are listed with their help but not imported, so ``fp8lab
    --help`` and ``fp8lab NAME ...`` load one subcommand at most.
    """
    from fp8lab.cli.exit_statuses import exit_epilog

    parser = _Parser(prog="fp8lab", description="FP8 verification workbench")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_line) in SUBCOMMANDS.items():
        if only is None or name == only:
            importlib.import_module(f"fp8lab.cli.{module}").add_parser(sub)
            sub.choices[name].epilog = exit_epilog(name)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _plain_streams() -> None:
    """Print what cannot be encoded (a path's undecodable bytes) escaped, never a traceback."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


# errors of the machine rather than of the command: nothing half-published, one line, exit 1
_MACHINE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EMFILE, errno.ENFILE}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; usage errors print one line to stderr and exit 2.

    ``--json`` and ``--junit-xml`` targets are checked and reserved before the
    subcommand starts (:mod:`fp8lab.cli.record_paths`); with
    ``--json -`` stdout holds only the JSON and everything else goes to stderr.
    SIGINT and SIGTERM unwind the command (its worker pools and notebook
    trees are ended on the way out) and exit 130 and 143.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    _plain_streams()
    wanted = command_of(words)
    try:
        parser = build_parser(wanted if wanted in SUBCOMMANDS else "")
        args = parser.parse_args(words)
    except SystemExit as exc:  # a refused argument (2) or --help (0): already printed
        return exc.code if isinstance(exc.code, int) else USAGE
    from fp8lab.cli.common import CliError
    from fp8lab.cli.record_paths import json_on_stdout, reserved_records
    from fp8lab.runtime.cluster import SCHEDULER_ENV
    from fp8lab.runtime.proctree import SignalInterrupt, install_signal_handlers

    # Only --scheduler and --dask-local put a command on a cluster. A $FP8LAB_SCHEDULER left
    # in the environment (it is how `fp8lab evidence` names its cluster to notebook kernels)
    # is neither read by this command nor handed on to the notebooks it starts.
    os.environ.pop(SCHEDULER_ENV, None)

    json_path = getattr(args, "json", None)
    records = {"--json": json_path, "--junit-xml": getattr(args, "junit_xml", None)}
    restore = install_signal_handlers()
    try:
        if getattr(args, "require_box", False):
            from fp8lab.cli.isolation_args import require_box

            require_box()
        with reserved_records(records):  # before any kernel starts: nothing can be there first
            if json_path == "-":
                with json_on_stdout():
                    return int(args.run(args))
            return int(args.run(args))
    except CliError as exc:
        print(f"fp8lab {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except OSError as exc:  # a full disk, a read-only folder: the machine's, said in one line
        if exc.errno not in _MACHINE_ERRNOS:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"fp8lab {args.command}: error: {exc.strerror}{where}", file=sys.stderr)
        return FAIL
    except KeyboardInterrupt as exc:
        stop = exc if isinstance(exc, SignalInterrupt) else SignalInterrupt(signal.SIGINT)
        print(f"fp8lab {args.command}: {stop}", file=sys.stderr)
        return stop.exit_status
    finally:
        restore()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
