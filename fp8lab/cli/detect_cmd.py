"""``fp8lab detect``: the inputs where two quantization kernels emit different bytes.

The default method is exact enumeration for the built-in reciprocal,divide pair,
where it is proven complete, and brute force for any other pair. Every entry
says ``complete: true|false``; an entry not proven complete prints a warning.

Exit status: 0 done (with ``--method check``: enumeration equals brute force at
every scale), 1 a check that differs, 2 usage error, 4 kernel-error (a kernel
raised, exited, timed out, returned no uint8 codes of x's shape, or a worker
died). A ``MODULE:FUNC`` kernel runs in a process of its own; fp8lab never
imports it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fp8lab.cli.argtypes import pattern_arg, workers_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.isolation_args import add_timeout_argument, set_kernel_timeout
from fp8lab.cli.names import (
    ALL_PATTERNS,
    BRUTE_ENGINES,
    BUILTIN_PAIR_KERNELS,
    KERNEL_ERROR,
    KERNEL_ERROR_EXIT,
)
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES
from fp8lab.runtime.progress import Progress
from fp8lab.specs.formats import FP8_FORMATS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from fp8lab.runtime.cluster import Cluster

__all__ = ["add_parser", "kernel_pair", "run", "scales_arg"]


def scales_arg(text: str) -> npt.NDArray[np.float32]:
    """Parse ``--scales``; a bad list is a usage error naming the value and rule."""
    from fp8lab.detect import parse_scales

    try:
        return parse_scales(text)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def kernel_pair(text: str, fmt: str) -> tuple[str, str]:
    """Parse and resolve ``--kernels A,B``."""
    from fp8lab.detect import KernelError, resolve_kernel

    names = [t.strip() for t in text.split(",")]
    if len(names) != 2 or not all(names):
        raise CliError(f"--kernels wants two kernels A,B, got {text!r}")
    try:
        for name in names:
            resolve_kernel(name, fmt)
    except KernelError as exc:
        raise CliError(str(exc)) from None
    return names[0], names[1]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "detect",
        help="find every float32 input where two kernels differ at given scales",
    )
    p.add_argument("--scales", required=True, help="comma-separated scales, e.g. 0.0092,0.13")
    p.add_argument(
        "--method",
        default=None,
        choices=("enumerate", "brute", "check"),
        help="enumerate the exposing inputs, brute-force all 2**32, or check one against the "
        "other; default: enumerate for the built-in reciprocal,divide pair (proven complete), "
        "brute for any other pair",
    )
    p.add_argument("--format", default="e4m3fn", choices=sorted(FP8_FORMATS), help="fp8 format")
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernels",
        metavar="A,B",
        default="reciprocal,divide",
        help=f"A,B each one of {', '.join(BUILTIN_PAIR_KERNELS)} or MODULE:FUNC",
    )
    p.add_argument("--start", type=pattern_arg, default=0, help="first bit pattern")
    p.add_argument("--stop", type=pattern_arg, default=ALL_PATTERNS, help="one past last")
    p.add_argument("--workers", type=workers_arg, default=None, help="brute-force processes")
    p.add_argument(
        "--engine",
        default="auto",
        choices=BRUTE_ENGINES,
        help="brute-force engine: fused (one compiled loop, built-in reciprocal,divide pair "
        "only), numpy (its twin, any pair); default auto: fused where it applies",
    )
    add_executor_args(p)
    add_timeout_argument(p)
    p.add_argument(
        "--json", "--out", dest="json", help="write one entry per scale here ('-' for stdout)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--bench", action="store_true", help="also time the enumeration per scale")
    p.set_defaults(run=run)


def _entry(
    args: argparse.Namespace, a: str, b: str, scale: float, cluster: Cluster | None
) -> dict[str, Any]:
    from fp8lab.detect import brute_force, crosscheck, enumerate_exposing
    from fp8lab.sweeps.range_run import RangeRun

    common: dict[str, Any] = {"fmt": args.format, "start": args.start, "stop": args.stop}
    if args.method == "enumerate":
        return enumerate_exposing(scale, a, b, **common).to_dict()
    run = RangeRun(
        start=args.start,
        stop=args.stop,
        workers=cluster.workers if cluster else args.workers,
        executor=cluster.executor if cluster else None,
        progress=None if args.quiet else Progress,
    )
    if args.method == "brute":
        return brute_force(scale, a, b, fmt=args.format, run=run, engine=args.engine).to_dict()
    check = crosscheck(scale, a, b, fmt=args.format, run=run, engine=args.engine)
    enum = enumerate_exposing(scale, a, b, **common).to_dict()
    return {
        **enum,
        "method": "check",
        "brute_count": check.brute_count,
        "enumerate_count": check.enumerate_count,
        "equal": check.equal,
        "wall_seconds": check.brute_seconds,
        "complete": True,
    }


def _report(args: argparse.Namespace, a: str, b: str, entry: dict[str, Any]) -> dict[str, Any]:
    """Print one scale's line (and a warning if it is not proven complete)."""
    classes: dict[str, int] = {}
    for c in entry["classes"]:
        key = f"{c['on_midpoint']}/{c['range']}"
        classes[key] = classes.get(key, 0) + 1
    extra = (
        f" enumerate={entry['enumerate_count']} equal={entry['equal']}" if "equal" in entry else ""
    )
    print(
        f"s={entry['scale']!r} ({entry['scale_hex']}): {entry['count']} exposing "
        f"[{args.method}, {entry['wall_seconds']} s]{extra} {classes}"
    )
    if not entry["complete"]:
        print(
            f"fp8lab detect: warning: s={entry['scale']!r}: {args.method} of {a} vs {b} is "
            "not proven complete (the window argument covers only the built-in "
            "reciprocal,divide pair); use --method brute for the complete set",
            file=sys.stderr,
        )
    return entry


def run(args: argparse.Namespace) -> int:
    """Detect at every scale, print a line each, return the exit status."""
    from fp8lab.detect import benchmark_enumeration, enumeration_is_complete, fused_applies
    from fp8lab.runtime.guard import KernelFaultError
    from fp8lab.sweeps.coverage import CoverageError

    scales = scales_arg(args.scales)
    set_kernel_timeout(args.kernel_timeout)
    a, b = kernel_pair(args.kernels, args.format)
    if args.method is None:
        args.method = "enumerate" if enumeration_is_complete(a, b) else "brute"
    on_cluster = args.scheduler is not None or args.dask_local is not None
    if args.engine == "fused" and args.method in ("brute", "check") and not fused_applies(a, b):
        raise CliError("--engine fused runs only the built-in reciprocal,divide kernels")
    if on_cluster and args.method == "enumerate":
        raise CliError("--scheduler and --dask-local run brute force: add --method brute or check")
    entries = []
    with open_executor(args) as cluster:
        for s in scales:
            try:
                entry = _entry(args, a, b, float(s), cluster)
            except KernelFaultError as exc:
                print(f"fp8lab detect: {KERNEL_ERROR}: {exc.reason}", file=sys.stderr)
                return KERNEL_ERROR_EXIT
            except CoverageError as exc:
                print(f"fp8lab detect: FAIL: coverage: {exc}", file=sys.stderr)
                return EXIT_CODES["fail"]
            except ValueError as exc:
                raise CliError(str(exc)) from None
            entries.append(_report(args, a, b, entry))
    payload: dict[str, Any] = {"kernels": [a, b], "format": args.format, "entries": entries}
    if args.bench:
        payload["benchmark"] = benchmark_enumeration([float(s) for s in scales])
        print(f"enumeration: {1e3 * payload['benchmark']['seconds_per_scale']:.3f} ms per scale")
    write_json_output(args.json, payload)
    ok = all(e.get("equal", True) for e in entries)
    return EXIT_CODES["pass"] if ok else EXIT_CODES["fail"]
