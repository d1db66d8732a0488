"""``fp8lab design``: golden vectors that kill a mutant kernel at chosen scales."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fp8lab.cli.argtypes import positive_int_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.isolation_args import add_timeout_argument, set_kernel_timeout
from fp8lab.cli.names import KERNEL_ERROR, KERNEL_ERROR_EXIT
from fp8lab.runtime.exit_codes import EXIT_CODES
from fp8lab.specs.formats import FP8_FORMATS

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "design",
        help="choose scales and the fewest words that kill a mutant kernel",
    )
    p.add_argument("--scales", required=True, help="candidate scales, comma-separated")
    p.add_argument("--margin", type=positive_int_arg, default=3, help="failing words per scale (k)")
    p.add_argument("--budget", type=positive_int_arg, default=3, help="scales to cover")
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernels",
        metavar="A,B",
        default="reciprocal,divide",
        help="REFERENCE,MUTANT",
    )
    add_timeout_argument(p)
    p.add_argument("--format", default="e4m3fn", choices=sorted(FP8_FORMATS), help="fp8 format")
    p.add_argument(
        "--json",
        "--out",
        dest="out",
        required=True,
        metavar="STEM",
        help="path stem: writes STEM.json and STEM.npz",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Design, write, re-check the written vectors, return the exit status."""
    from fp8lab.cli.detect_cmd import kernel_pair, scales_arg
    from fp8lab.detect import (
        check_golden,
        design_detector,
        load_golden,
        resolve_kernel,
        write_golden,
    )
    from fp8lab.runtime.guard import KernelFaultError

    scales = scales_arg(args.scales)
    set_kernel_timeout(args.kernel_timeout)
    a, b = kernel_pair(args.kernels, args.format)
    try:
        det = design_detector(
            scales, margin=args.margin, budget=args.budget, a=a, b=b, fmt=args.format
        )
        json_path, npz_path = write_golden(det, Path(args.out))
        golden = load_golden(npz_path)
        ref = check_golden(resolve_kernel(a, args.format), golden, args.format)
        mut = check_golden(resolve_kernel(b, args.format), golden, args.format)
    except KernelFaultError as exc:
        print(f"fp8lab design: {KERNEL_ERROR}: {exc.reason}", file=sys.stderr)
        return KERNEL_ERROR_EXIT
    except (ValueError, FileExistsError) as exc:
        raise CliError(str(exc)) from None
    print(
        f"{det.inputs.size} words (lower bound {det.lower_bound}) at scales "
        f"{[float(s) for s in det.scales]}; wrote {json_path} and {npz_path}"
    )
    print(f"  reference {a} mismatches per scale {ref}; mutant {b} {mut}")
    ok = all(r == 0 for r in ref) and all(m >= args.margin for m in mut)
    return EXIT_CODES["pass"] if ok else EXIT_CODES["fail"]
