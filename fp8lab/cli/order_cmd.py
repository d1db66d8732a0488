"""``fp8lab order``: infer a kernel's accumulation order (FPRev) and name its family."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fp8lab.cli.argtypes import (
    MAX_SIDE,
    bounded_int_arg,
    check_memory,
    seed_arg,
    side_arg,
    summands_arg,
    warmup_arg,
)
from fp8lab.cli.common import CliError
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.names import ORDER_METHODS
from fp8lab.cli.record_paths import write_json_output
from fp8lab.runtime.exit_codes import EXIT_CODES

if TYPE_CHECKING:
    from fp8lab.order import F32MatmulProbe, Fp8MatmulProbe, SumProbe
    from fp8lab.order.per_position import PositionsRecord

__all__ = ["add_parser", "run"]

KINDS = ("fp8", "f32-matmul", "sum")
SUMMANDS, SIDE = summands_arg, side_arg
INDEX = bounded_int_arg(0, MAX_SIDE - 1, "an output index")
LINES = bounded_int_arg(1, 1 << 20, "a number of lines")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "order",
        help="infer a kernel's summation tree (FPRev) and name its family",
        description=(
            "Infers the summation tree of one output, of a grid of outputs or of every "
            "output (--positions), groups outputs with equal trees into classes, then "
            "runs each class's tree as a float32 model on seeded fp8 operands and "
            "compares every output bit for bit. The record names the host facts the "
            "order depends on (CPU, BLAS, core type, threads). Exit 0 when the trees "
            "reproduce the kernel (or have a fused node, which no float32 model runs), "
            "1 when the kernel faults or has no fixed order (outputs that fit no tree, "
            "answers that change, outputs the trees miss), 2 for bad usage."
        ),
    )
    p.add_argument(
        "--kernel",
        "--kernels",
        required=True,
        help="MODULE:FUNC, MODULE:OBJ, or path/lib.so:symbol (fp8lab_matmul's C ABI, --as fp8)",
    )
    p.add_argument("-k", "--k", dest="k", type=SUMMANDS, required=True, help="summands per output")
    p.add_argument(
        "--as",
        dest="kind",
        choices=KINDS,
        default="fp8",
        help="fp8: a MatmulKernel on e4m3fn codes (default); f32-matmul: "
        "FUNC(A[M,K], B[N,K]) -> A·Bᵀ float32; sum: FUNC(x[K]) -> float32",
    )
    p.add_argument(
        "--method",
        choices=ORDER_METHODS,
        default="recursive",
        help="recursive: about K calls for a chain (default); basic: K(K-1)/2 calls",
    )
    p.add_argument("--m", type=SIDE, default=1, help="rows of A (matmuls; default 1)")
    p.add_argument(
        "-n", "--n", dest="n", type=SIDE, default=16, help="rows of B (matmuls; default 16)"
    )
    p.add_argument("--row", type=INDEX, default=0, help="output row read (default 0)")
    p.add_argument("--col", type=INDEX, default=0, help="output column read (default 0)")
    p.add_argument(
        "--positions",
        help="'all', or ROWS:COLS (comma lists and ranges a-b, '*' for every one, e.g. "
        "6-11:*): infer every output named, each call answering at all outputs, and "
        "group equal trees into classes (default: the one output --row/--col)",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="ask one question per row (f32) or diagonal output (fp8) per call; "
        "assumes every output sums alike (the model check then covers every output)",
    )
    p.add_argument(
        "--out-dtype",
        dest="out_dtype",
        choices=("f32", "bf16", "f16"),
        default="f32",
        help="the kernel's output type (fp8: the out_dtype it is called with): sizes the "
        "probe values (masks it holds, counts it says exactly) and the output roundings "
        "the check tries (default f32)",
    )
    p.add_argument(
        "--warmup",
        type=warmup_arg,
        default=1,
        help="calls on the first probe's inputs before inference (default 1); a first call "
        "that answers otherwise is named in the record, never read as a tree",
    )
    p.add_argument(
        "--seed", type=seed_arg, default=0, help="seed of the fp8 operands of the model check"
    )
    p.add_argument("--max-lines", type=LINES, default=40, help="lines of the drawn tree")
    add_isolation_arguments(p)
    p.add_argument("--json", "--out", dest="json", help="write the record here ('-' for stdout)")
    p.set_defaults(run=run)


def _check_sizes(args: argparse.Namespace) -> None:
    """Refuse bad sizes before any process starts or any array is allocated."""
    k, m, n = args.k, args.m, args.n
    if k < 2:
        raise CliError(f"--k must be at least 2, got {k}")
    if m < 1 or n < 1 or not (0 <= args.row < m and 0 <= args.col < n):
        raise CliError(f"want --m, --n >= 1 and the output ({args.row}, {args.col}) inside")
    sizes = f"--m {m} --n {n} --k {k}"
    reason = check_memory(4 * (m * n * k + 3 * (m * k + n * k + m * n)), sizes)
    if reason:  # probes hold M·K and N·K values; the model check forms M·N·K products
        raise CliError(reason)
    if args.positions is not None and args.batch:
        raise CliError("--positions infers each output; --batch assumes they sum alike: pick one")
    if args.batch and args.out_dtype != "f32":
        raise CliError("--batch reads float32 outputs; a narrower --out-dtype is probed per output")
    if args.kind == "sum" and args.out_dtype != "f32":
        raise CliError("--as sum reads a float32 sum; --out-dtype goes with the matmuls")


def _probe(args: argparse.Namespace, kernel: Any) -> F32MatmulProbe | Fp8MatmulProbe | SumProbe:
    from fp8lab.order import F32MatmulProbe, Fp8MatmulProbe, SumProbe

    k, m, n, at = args.k, args.m, args.n, (args.row, args.col)
    if args.kind == "fp8":
        return Fp8MatmulProbe(kernel, k, m, n, at, args.batch, out=args.out_dtype)
    if args.kind == "sum":
        return SumProbe(kernel, k)
    return F32MatmulProbe(kernel, k, m, n, at, args.batch, out=args.out_dtype)


def _positions(args: argparse.Namespace) -> list[tuple[int, int]]:
    from fp8lab.order.positions import parse_positions

    if args.positions is None:
        return [(args.row, args.col)]
    m, n = (1, 1) if args.kind == "sum" else (args.m, args.n)
    try:
        return parse_positions(args.positions, m, n)
    except ValueError as exc:
        raise CliError(f"--positions: {exc}") from None


def _batched(
    args: argparse.Namespace, probe: F32MatmulProbe | Fp8MatmulProbe, host: dict[str, Any]
) -> PositionsRecord:
    """One row-batched inference, taken to hold at every output, then checked at every output."""
    from fp8lab.order import infer_order
    from fp8lab.order.grid import GridProbe
    from fp8lab.order.per_position import check_classes
    from fp8lab.order.positions import PositionClass

    rec = infer_order(probe, args.kernel, args.method)
    every = tuple((r, c) for r in range(args.m) for c in range(args.n))
    fields = {
        "kernel": args.kernel,
        "probe": rec.probe,
        "k": rec.k,
        "shape": rec.shape,
        "method": rec.method,
        "calls": rec.calls,
        "seconds": rec.seconds,
        "host": host,
        "sibling_rows": rec.sibling_rows,
        "sibling_nodes": rec.sibling_nodes,
    }
    one = PositionClass(every, rec.tree, rec.family)
    return check_classes(GridProbe(probe), fields, [one], args.seed)


def _host_line(host: dict[str, Any]) -> str:
    target = host.get("target") or {"library": "numpy", "blas": host.get("blas", {})}
    env = " ".join(f"{k}={v}" for k, v in host.get("environment", {}).items())
    blas = target.get("blas") or {}
    if target.get("library") == "numpy":
        ran = (
            f"numpy {target.get('version', host.get('numpy', ''))}, {blas.get('library')} "
            f"{blas.get('version')}, core type {blas.get('core_type')}, "
            f"{blas.get('threads')} threads"
        )
    else:
        ran = (
            f"{target.get('library')} {target.get('version', '')} "
            f"({target.get('backend', '')}), {target.get('threads')} threads"
        )
    return f"host: {host.get('cpu')}; {ran}" + (f"; {env}" if env else "")


def _classes(n: int) -> str:
    return "1 class" if n == 1 else f"{n} classes"


def _print(record: PositionsRecord, max_lines: int) -> None:
    print(f"{record.kernel}: K={record.k}, probe {record.probe}, {record.method}")
    print(
        f"calls: {record.calls} to infer ({_classes(len(record.classes))} over "
        f"{sum(len(c.outputs) for c in record.classes)} outputs), {record.check_calls} to check"
    )
    if record.sibling_rows:
        print(
            f"sibling test: {record.sibling_nodes} fused nodes settled, "
            f"{record.sibling_rows} outputs read (counted above)"
        )
    for n, cls in enumerate(record.classes, 1):
        if cls.tree is None:
            print(f"class {n}: {cls.where()}: no tree ({cls.error})")
            continue
        print(f"class {n}: {cls.where()}")
        print(f"family: {cls.family or 'no known family'}")
        print(f"max fan-in {cls.tree.max_fan_in()}, depth {cls.tree.depth()}")
        print(cls.tree.draw(max_lines))
    print(
        f"verdict: {record.verdict}: {record.outputs_reproduced} of {record.outputs_checked} "
        f"outputs reproduced bit for bit over {record.reproduction.draws} seeded draws"
    )
    if record.reproduction.output_rounding and record.verdict == "reproduced":
        print(f"output: {record.reproduction.output_rounding} (out {record.out})")
    for line in record.evidence:
        print(f"  {line}")
    for test in record.failed_tests:
        print(f"  failed test {test['test']}: {test['finding']}; input {test['input']}")
    if record.first_call.get("differs"):
        print(f"first-call effect: {record.first_call['finding']}")
    print(_host_line(record.host))


def run(args: argparse.Namespace) -> int:
    """Print the classes, their families and trees, and the verdict; the record goes to --json."""
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
    from fp8lab.kernels.sources.library_facts import library_facts
    from fp8lab.kernels.sources.shared_source import is_shared_source
    from fp8lab.order import ProbeError, SumProbe
    from fp8lab.order.host import host_facts
    from fp8lab.order.per_position import infer_positions
    from fp8lab.runtime.guard import KernelFaultError

    if args.kind != "fp8" and is_shared_source(args.kernel):
        raise CliError(f"--kernel {args.kernel}: a shared library is read --as fp8 (fp8lab_matmul)")
    _check_sizes(args)
    positions = _positions(args)
    kind = "gemm" if args.kind == "fp8" else "callable"
    with KernelHost(kind, args.kernel, timeout=args.kernel_timeout) as host:
        try:
            host.declared  # noqa: B018 - a module that cannot be imported is a usage error
        except KernelLoadError as exc:
            raise CliError(str(exc)) from None
        try:
            if host.dead:
                raise KernelFaultError(host.dead)
            kernel = host.kernel()
            probe = _probe(args, kernel)
            facts = host_facts(getattr(kernel, "host_facts", None) or library_facts(kernel))
            if args.batch and not isinstance(probe, SumProbe):
                record = _batched(args, probe, facts)
            else:
                record = infer_positions(
                    probe, args.kernel, positions, method=args.method, seed=args.seed,
                    host=facts, warmup=args.warmup,
                )  # fmt: skip
        except (ProbeError, KernelFaultError) as exc:
            print(f"fp8lab order: {args.kernel}: {exc}", file=sys.stderr)
            return EXIT_CODES["fail"]
        changed = "; ".join(host.env_changes)
        seen = {"fp_env_read": host.fp_env_read, "isolation": host.isolation}
    if host.dead:  # the kernel's process ended after the last probe it answered
        print(f"fp8lab order: {args.kernel}: {host.dead}", file=sys.stderr)
        return EXIT_CODES["fail"]
    _print(record, args.max_lines)
    if changed:
        print(f"fp_env_changed: {changed}")
    write_json_output(args.json, {**record.to_json(), "fp_env_changed": changed, **seen})
    if changed and args.strict_env:
        print(f"fp8lab order: {args.kernel}: --strict-env: {changed}", file=sys.stderr)
        return EXIT_CODES["fail"]
    if record.verdict == "not-fixed":
        print(f"fp8lab order: {args.kernel}: no fixed order: {record.evidence[0]}", file=sys.stderr)
        return EXIT_CODES["fail"]
    return 0
