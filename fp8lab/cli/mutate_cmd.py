"""``fp8lab mutate``: run mutants against the gates and print the kill table."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from fp8lab.cli.argtypes import nonnegative_int_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES

if TYPE_CHECKING:
    from fp8lab.mutants.harness import MutantResult

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "mutate",
        help="run mutants against the gates; report kill margins",
    )
    p.add_argument("--catalogue", action="store_true", help="the mutant catalogue (default)")
    p.add_argument("--source", action="store_true", help="AST mutants of the kernel modules")
    p.add_argument(
        "--gate",
        "--gates",
        dest="gates",
        default="G1,G3,GQ,GF",
        help="comma-separated gates (default G1,G3,GQ,GF)",
    )
    p.add_argument(
        "--threshold", type=nonnegative_int_arg, default=3, help="thin-margin threshold (default 3)"
    )
    add_executor_args(p)
    p.add_argument("--json", "--out", dest="json", help="write the record here ('-' for stdout)")
    p.set_defaults(run=run)


def _rows(results: tuple[MutantResult, ...], width: int = 44) -> list[str]:
    from fp8lab.gates.records import MutantVerdict

    lines = [f"{'id':<10} {'verdict':<11} {'failed/run':>11} {'moved':>7}  killed_by  note"]
    for r in results:
        note = ("thin margin" if r.thin else "") + (
            " case count changed" if r.case_count_changed else ""
        )
        if r.verdict is MutantVerdict.INCOMPETENT:
            note = r.build_error[:width]
        lines.append(
            f"{r.id[-10:]:<10} {r.verdict.value:<11} "
            f"{f'{r.failed_assertions}/{r.assertions}':>11} {r.moved_words:>7}  "
            f"{','.join(r.killed_by) or '-':<9}  {note}".rstrip()
        )
    return lines


def run(args: argparse.Namespace) -> int:
    """Run and print; the exit status says whether the gates are strong enough."""
    from fp8lab.gates.records import MutantVerdict
    from fp8lab.mutants.report import mutation_report

    gates = tuple(g.strip() for g in args.gates.split(",") if g.strip())
    catalogue = args.catalogue or not args.source
    try:
        with open_executor(args) as cluster:
            report = mutation_report(
                gates,
                catalogue=catalogue,
                source=args.source,
                threshold=args.threshold,
                executor=cluster.executor if cluster else None,
                workers=cluster.workers if cluster else None,
            )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if report.catalogue:
        print("catalogue:")
        print("\n".join(_rows(report.catalogue)))
        print(f"minimum kill margin: {report.min_margin}")
    if report.source:
        survivors = [r for r in report.source if r.verdict is MutantVerdict.SURVIVED]
        print(
            f"source mutants: {len(report.source)}, survived {len(survivors)}, "
            f"justified equivalent {len(report.equivalent_checked)} (re-checked on "
            f"{sum(report.equivalent_checked.values())} inputs), score {report.score:.3f}"
        )
        for check in report.rechecks:
            verdict = "equivalent" if check.equivalent else "REJECTED"
            print(f"  re-check {check.key}: {verdict}, {check.examined} inputs, {check.means}")
            if not check.equivalent:
                print(f"    {check.detail}")
        for key in report.unjustified_survivors:
            survivor = next(r for r in report.source if r.id == key)
            print(f"UNJUSTIFIED SURVIVOR {key}: {survivor.description}\n{survivor.diff}")
    write_json_output(args.json, report.to_dict())
    weak = [r for r in report.catalogue if r.verdict is not MutantVerdict.KILLED or r.thin]
    return EXIT_CODES["fail"] if weak or report.unjustified_survivors else EXIT_CODES["pass"]
