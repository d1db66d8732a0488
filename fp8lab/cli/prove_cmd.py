"""``fp8lab prove``: the evidence job (gates + exhaustive proofs) into results/."""

from __future__ import annotations

import argparse
from pathlib import Path

from fp8lab.cli.argtypes import check_writable_dir, stop_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.names import ALL_PATTERNS, PROOF_PLANS
from fp8lab.runtime.exit_codes import EXIT_CODES

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "prove",
        help="run gates and exhaustive proofs; file the evidence",
        description="A failed run is filed under failed/; with --stop below 2**32 the run "
        "is filed as partial under partial/. Either way results/index.* are rewritten.",
    )
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument(
        "--stop",
        type=stop_arg,
        default=ALL_PATTERNS,
        help="examine patterns [0, STOP) only, for a quick run",
    )
    add_executor_args(p)
    p.add_argument(
        "--plan",
        default="default",
        choices=sorted(PROOF_PLANS),
        help="default: gates and the fp8 proofs; mx: the OCP MX format proofs (proofs-mx)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the plan and print where the evidence went."""
    from fp8lab.evidence.index import write_index
    from fp8lab.evidence.proofs import ProofsRunError, run_proofs

    reason = check_writable_dir(args.results, "--results")
    if reason:
        raise CliError(reason)
    results = Path(args.results)
    try:
        with open_executor(args) as cluster:
            done = run_proofs(
                results, stop=args.stop, quiet=args.quiet, cluster=cluster, plan=args.plan
            )
    except ProofsRunError as exc:
        print(f"prove: FAILED: {exc}; filed under {results / exc.folder}")
        return EXIT_CODES["fail"]
    finally:
        write_index(results)
    for name, status in done.summary["gates"].items():
        note = " (owed, not run here)" if status == "PENDING" else ""
        print(f"gate {name}: {status}{note}")
    for slug, row in done.summary["proofs"].items():
        print(
            f"proof {slug}: {row['status']} examined={row['examined']} "
            f"mismatches={row['mismatches']} nan-code={row['nan_code_mismatches']} "
            f"{row['wall_seconds']} s"
        )
    if done.partial:
        print(f"partial: patterns [0, {args.stop:#x}) only; never counted as the published proof")
    print(f"evidence: {done.final}")
    print(f"index: {results / 'index.html'}")
    pending = "PENDING" in done.summary["gates"].values()
    return EXIT_CODES["pending"] if pending else EXIT_CODES["pass"]
