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
        "writes DIR/outputs/; 'fp8lab gates --gate G --outputs DIR' checks them. "
        "Exit status: 0 written, 2 usage error (an existing non-empty DIR is refused).",
    )
    p.add_argument(
        "--gate",
        "--gates",
        dest="gate",
        required=True,
        choices=BUNDLE_GATES,
        help="the gate whose cases to export",
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
    try:
        document = write_bundle(args.gate, Path(args.out))
    except BundleExistsError as exc:
        raise CliError(f"--out {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot write --out {args.out}: {exc.strerror or exc}") from None
    print(f"{args.gate}: {len(document['cases'])} cases written to {args.out}")
    print(f"population_sha256 {document['population_sha256']}")
    return 0
