"""``fp8lab gemm``: the GEMM declarations, one of them as a file, and a kernel's inferred.

``list`` prints the built-in declarations; ``show NAME`` prints one as the
TOML that ``fp8lab gates --gate G3 --gemm-file`` reads; ``infer --kernel K``
infers the order by class, the scale placement and the output rounding of a
kernel at one shape (:func:`fp8lab.order.gemm_infer.infer_gemm`; the kernel
runs in a process of its own) and writes the declaration (``--write-gemm``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fp8lab.cli.argtypes import seed_arg, side_arg, summands_arg, warmup_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "gemm",
        help="list the GEMM declarations, print one as a file, or infer a kernel's",
        description="fp8lab gemm list; fp8lab gemm show NAME (TOML on stdout, the form "
        "--gemm-file reads); fp8lab gemm infer --kernel MODULE:OBJ --m M --n N --k K "
        "[--out-dtype f32|bf16|f16] [--scales tensor|rowwise] [--write-gemm PATH] "
        "[--json PATH]: the order by class, the scales and the output rounding that "
        "reproduce the kernel bit for bit at that shape.",
    )
    p.add_argument("action", choices=("list", "show", "infer"), help="what to do")
    p.add_argument("name", nargs="?", help="show: the declaration's name (see: fp8lab gemm list)")
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernel",
        metavar="MODULE:OBJ",
        help="infer: a MatmulKernel object or FUNC(a_codes, b_codes, s_a, s_b, out_dtype) "
        "(or path/lib.so:symbol); it runs in a process of its own",
    )
    p.add_argument("--m", type=side_arg, default=64, help="infer: rows of A (default 64)")
    p.add_argument(
        "-n", "--n", dest="n", type=side_arg, default=64, help="infer: rows of B (default 64)"
    )
    p.add_argument("--k", type=summands_arg, default=256, help="infer: summands (default 256)")
    p.add_argument(
        "--out-dtype",
        choices=("f32", "bf16", "f16"),
        default="f32",
        help="infer: the out_dtype the kernel is called with (default f32)",
    )
    p.add_argument(
        "--scales",
        choices=("tensor", "rowwise"),
        default="tensor",
        help="infer: one scale each (default), or one per row of A and column of the output",
    )
    p.add_argument(
        "--warmup", type=warmup_arg, default=1, help="infer: calls before the first probe"
    )
    p.add_argument("--seed", type=seed_arg, default=0, help="infer: seed of the checks and fits")
    p.add_argument("--as-name", default="inferred", help="infer: the written declaration's name")
    add_isolation_arguments(p)
    p.add_argument(
        "--write-gemm",
        metavar="PATH",
        help="infer: write the declaration as a GEMM file (fp8lab never overwrites a file)",
    )
    p.add_argument("--json", "--out", dest="json", help="infer: write the record here")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List, show or infer; return the exit status."""
    from fp8lab.specs.gemm_decl import GEMMS, gemm_text

    if args.action == "infer":
        return _infer(args)
    if args.kernel is not None or args.write_gemm is not None or args.json is not None:
        raise CliError("--kernel, --write-gemm and --json go with gemm infer")
    if args.action == "show":
        if args.name not in GEMMS:
            raise CliError(f"gemm show NAME: one of {', '.join(GEMMS)}")
        print(gemm_text(GEMMS[args.name]), end="")
        return 0
    if args.name is not None:
        raise CliError("gemm list takes no NAME (see: fp8lab gemm show NAME)")
    width = max(len(n) for n in GEMMS)
    for name, decl in GEMMS.items():
        print(f"{name:<{width}}  {decl.source}")
    return 0


def _check(args: argparse.Namespace) -> None:
    if args.name is not None or args.kernel is None:
        raise CliError("gemm infer takes --kernel MODULE:OBJ and no NAME")
    from fp8lab.cli.argtypes import check_memory

    sizes = f"--m {args.m} --n {args.n} --k {args.k}"
    reason = check_memory(8 * (args.m * args.n * args.k + 3 * (args.m + args.n) * args.k), sizes)
    if reason:
        raise CliError(reason)
    if args.write_gemm not in (None, "-") and Path(args.write_gemm).exists():
        raise CliError(f"{args.write_gemm} exists; fp8lab never overwrites a file")


def _infer(args: argparse.Namespace) -> int:
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
    from fp8lab.kernels.sources.library_facts import library_facts
    from fp8lab.order.gemm_infer import GemmInferenceError, infer_gemm
    from fp8lab.order.host import host_facts
    from fp8lab.runtime.guard import KernelFaultError

    _check(args)
    with KernelHost("gemm", args.kernel, timeout=args.kernel_timeout) as host:
        try:
            kernel = host.kernel()
        except KernelLoadError as exc:
            raise CliError(str(exc)) from None
        try:
            if host.dead:
                raise KernelFaultError(host.dead)
            facts = host_facts(getattr(kernel, "host_facts", None) or library_facts(kernel))
            found = infer_gemm(
                kernel, (args.m, args.n, args.k), out=args.out_dtype,
                rowwise=args.scales == "rowwise", name=args.as_name, warmup=args.warmup,
                seed=args.seed, host=facts,
            )  # fmt: skip
        except GemmInferenceError as exc:
            print(f"fp8lab gemm infer: {args.kernel}: {exc}", file=sys.stderr)
            for test in exc.record.failed_tests if exc.record else ():
                print(f"  failed test {test['test']}: {test['input']}", file=sys.stderr)
            write_json_output(args.json, {"error": str(exc), "order": _order(exc.record)})
            return EXIT_CODES["fail"]
        except KernelFaultError as exc:
            print(f"fp8lab gemm infer: {args.kernel}: {exc}", file=sys.stderr)
            return EXIT_CODES["fail"]
        changed = "; ".join(host.env_changes)
    _print(found, args)
    if changed:
        print(f"fp_env_changed: {changed}")
    if args.write_gemm:
        _write(Path(args.write_gemm), found.declaration)
    write_json_output(args.json, {**found.to_json(), "fp_env_changed": changed})
    return EXIT_CODES["fail"] if changed and args.strict_env else 0


def _order(record: Any) -> Any:
    return None if record is None else record.to_json()


def _print(found: Any, args: argparse.Namespace) -> None:
    decl, order = found.declaration, found.order
    print(f"{args.kernel}: {args.m}x{args.n}x{args.k}, out {args.out_dtype}")
    for cls in order.classes:
        print(f"class {cls.where()}: {cls.family or 'no known family'}")
    ordered = f" ({decl.scale_order})" if decl.scales in ("accumulator", "product") else ""
    print(
        f"scales: {decl.scales}{ordered}, {decl.a_scale} A, {decl.b_scale} B; products "
        f"{decl.products}; intermediate {decl.intermediate}"
    )
    print(f"output: {decl.output}, rounded {decl.output_rounding}")
    print(
        f"calls: {order.calls} to infer, {order.check_calls} to check; {found.candidates_tried} "
        f"scale candidates on {found.outputs_fitted} outputs; {found.seconds:.1f} s"
    )
    if order.first_call.get("differs"):
        print(f"first-call effect: {order.first_call['finding']}")
    target = order.host.get("target", {})
    print(
        f"host: {order.host.get('cpu')}; {target.get('library')} {target.get('version', '')} "
        f"({target.get('backend', '')}), {target.get('threads')} threads"
    )


def _write(path: Path, decl: Any) -> None:
    from fp8lab.runtime.atomic import write_atomic
    from fp8lab.specs.gemm_decl import gemm_text

    try:
        write_atomic(path, gemm_text(decl).encode())
    except OSError as exc:
        raise CliError(f"cannot write --write-gemm {path}: {exc.strerror or exc}") from None
    print(f"written: {path}")
