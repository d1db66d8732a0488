"""``fp8lab export``: write a gate's inputs as a bundle for a kernel that runs elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from fp8lab.cli.argtypes import check_writable_dir
from fp8lab.cli.common import CliError
from fp8lab.specs.gates import GATES, bundle_gates, gates_taking

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "export",
        help="write a gate's inputs as a bundle (fp8lab.bundle/1)",
        description="Writes DIR/bundle.json, DIR/bundle.txt and DIR/inputs/; your runner "
        "writes DIR/outputs/; 'fp8lab gates --gate G --outputs DIR' checks them (GQ: "
        "--scheme S --rule R on both commands).",
    )
    p.add_argument(
        "--gate",
        "--gates",
        dest="gate",
        required=True,
        choices=bundle_gates(),
        help="the gate whose cases to export",
    )
    p.add_argument("--scheme", metavar="NAME", help="GQ: the scheme (required for GQ)")
    p.add_argument(
        "--rule", metavar="NAME", help="GQ: the scale rule the kernel follows (required for GQ)"
    )
    p.add_argument(
        "--json",
        "--out",
        dest="out",
        metavar="DIR",
        required=True,
        help="the bundle directory: new, or empty; never overwritten",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the bundle; 0 when written."""
    from fp8lab.bundle import BundleExistsError, write_bundle

    reason = check_writable_dir(args.out, "--out")
    if reason:
        raise CliError(reason)
    named = _named(args)
    try:
        document = write_bundle(args.gate, Path(args.out), **named)
    except BundleExistsError as exc:
        raise CliError(f"--out {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot write --out {args.out}: {exc.strerror or exc}") from None
    what = " ".join([args.gate, *named.values()])
    print(f"{what}: {len(document['cases'])} cases written to {args.out}")
    print(f"population_sha256 {document['population_sha256']}")
    return 0


def _named(args: argparse.Namespace) -> dict[str, str]:
    """What the bundle is for besides its gate: a scheme and rule, for a gate that needs them.

    Raises:
        CliError: for --scheme or --rule on a gate that takes none, one missing, or a
            name that is unknown or of another scheme (one line, exit 2).
    """
    from fp8lab.cli.scheme_args import scheme_choices

    if "schemes" not in GATES[args.gate].needs:
        if args.scheme or args.rule:
            raise CliError(
                f"--scheme and --rule apply to --gate {'/'.join(gates_taking('schemes'))} only"
            )
        return {}
    if args.scheme is None or args.rule is None:
        raise CliError(f"--gate {args.gate} needs --scheme and --rule (what the kernel computes)")
    args.kernel = args.rule_file = None
    (choice,) = scheme_choices(args, {})
    return {"scheme": choice.scheme, "rule": choice.rule.name}
