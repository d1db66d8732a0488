"""``fp8lab export``: write a gate's inputs as a bundle for a kernel that runs elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from fp8lab.cli.argtypes import check_writable_dir
from fp8lab.cli.common import CliError
from fp8lab.cli.names import BUNDLE_GATES

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
        choices=BUNDLE_GATES,
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
    _check_scheme(args)
    try:
        document = write_bundle(args.gate, Path(args.out), args.scheme, args.rule)
    except BundleExistsError as exc:
        raise CliError(f"--out {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot write --out {args.out}: {exc.strerror or exc}") from None
    what = f"GQ {args.scheme} {args.rule}" if args.gate == "GQ" else args.gate
    print(f"{what}: {len(document['cases'])} cases written to {args.out}")
    print(f"population_sha256 {document['population_sha256']}")
    return 0


def _check_scheme(args: argparse.Namespace) -> None:
    """GQ needs a valid --scheme and --rule; the other gates take neither."""
    from fp8lab.cli.kernel_args import scheme_options

    if args.gate != "GQ":
        if args.scheme or args.rule:
            raise CliError("--scheme and --rule apply to --gate GQ only")
        return
    if args.scheme is None or args.rule is None:
        raise CliError("--gate GQ needs --scheme and --rule (what the kernel computes)")
    args.kernel = None
    scheme_options(args)  # one line, exit 2, for an unknown or mismatched name
