"""``fp8lab order``: infer a kernel's accumulation order (FPRev) and name its family."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fp8lab.cli.argtypes import check_memory
from fp8lab.cli.common import CliError, write_json_output
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.names import K_MULTIPLE, ORDER_METHODS
from fp8lab.runtime.exit_codes import EXIT_CODES

if TYPE_CHECKING:
    from fp8lab.order import F32MatmulProbe, Fp8MatmulProbe, SumProbe
    from fp8lab.order.per_position import PositionsRecord

__all__ = ["add_parser", "run"]

KINDS = ("fp8", "f32-matmul", "sum")


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
    p.add_argument("-k", "--k", dest="k", type=int, required=True, help="summands per output")
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
    p.add_argument("--m", type=int, default=1, help="rows of A (matmuls; default 1)")
    p.add_argument(
        "-n", "--n", dest="n", type=int, default=16, help="rows of B (matmuls; default 16)"
    )
    p.add_argument("--row", type=int, default=0, help="output row read (default 0)")
    p.add_argument("--col", type=int, default=0, help="output column read (default 0)")
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
        "--seed", type=int, default=0, help="seed of the fp8 operands of the model check"
    )
    p.add_argument("--max-lines", type=int, default=40, help="lines of the drawn tree")
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
    if args.kind == "fp8" and (k % K_MULTIPLE or n % K_MULTIPLE):
        raise CliError(f"--k {k} and --n {n} must be multiples of {K_MULTIPLE} (MatmulFp8)")
    if not args.kernel_timeout > 0:
        raise CliError(f"--kernel-timeout must be positive, got {args.kernel_timeout}")


def _probe(args: argparse.Namespace, kernel: Any) -> F32MatmulProbe | Fp8MatmulProbe | SumProbe:
    from fp8lab.order import F32MatmulProbe, Fp8MatmulProbe, SumProbe

    k, m, n, at = args.k, args.m, args.n, (args.row, args.col)
    if args.kind == "fp8":
        return Fp8MatmulProbe(kernel, k, m, n, at, args.batch)
    if args.kind == "sum":
        return SumProbe(kernel, k)
    return F32MatmulProbe(kernel, k, m, n, at, args.batch)


def _positions(args: argparse.Namespace) -> list[tuple[int, int]]:
    from fp8lab.order.positions import parse_positions

    if args.positions is None:
        return [(args.row, args.col)]
    m, n = (1, 1) if args.kind == "sum" else (args.m, args.n)
    try:
        return parse_positions(args.positions, m, n)
    except ValueError as exc:
        raise CliError(f"--positions: {exc}") from None


def _batched(args: argparse.Namespace, probe: F32MatmulProbe | Fp8MatmulProbe) -> PositionsRecord:
    """One row-batched inference, taken to hold at every output, then checked at every output."""
    from fp8lab.order import infer_order
    from fp8lab.order.grid import GridProbe
    from fp8lab.order.host import host_facts
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
        "host": host_facts(),
        "sibling_rows": rec.sibling_rows,
        "sibling_nodes": rec.sibling_nodes,
    }
    one = PositionClass(every, rec.tree, rec.family)
    return check_classes(GridProbe(probe), fields, [one], args.seed)


def _host_line(host: dict[str, Any]) -> str:
    blas = host.get("blas", {})
    env = " ".join(f"{k}={v}" for k, v in host.get("environment", {}).items())
    return (
        f"host: {host.get('cpu')}; {blas.get('library')} {blas.get('version')}, core type "
        f"{blas.get('core_type')}, {blas.get('threads')} threads" + (f"; {env}" if env else "")
    )


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
    for line in record.evidence:
        print(f"  {line}")
    print(_host_line(record.host))


def run(args: argparse.Namespace) -> int:
    """Print the classes, their families and trees, and the verdict; the record goes to --json."""
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
    from fp8lab.kernels.sources.shared_abi import is_shared_source
    from fp8lab.order import ProbeError, SumProbe
    from fp8lab.order.per_position import infer_positions
    from fp8lab.runtime.guard import KernelFaultError

    if args.kind != "fp8" and is_shared_source(args.kernel):
        raise CliError(f"--kernel {args.kernel}: a shared library is read --as fp8 (fp8lab_matmul)")
    _check_sizes(args)
    positions = _positions(args)
    kind = "matmul" if args.kind == "fp8" else "callable"
    with KernelHost(kind, args.kernel, timeout=args.kernel_timeout) as host:
        try:
            host.declared  # noqa: B018 - a module that cannot be imported is a usage error
        except KernelLoadError as exc:
            raise CliError(str(exc)) from None
        try:
            if host.dead:
                raise KernelFaultError(host.dead)
            probe = _probe(args, host.kernel())
            if args.batch and not isinstance(probe, SumProbe):
                record = _batched(args, probe)
            else:
                record = infer_positions(
                    probe, args.kernel, positions, method=args.method, seed=args.seed
                )
        except (ProbeError, KernelFaultError) as exc:
            print(f"fp8lab order: {args.kernel}: {exc}", file=sys.stderr)
            return EXIT_CODES["fail"]
        changed = "; ".join(host.env_changes)
    if host.dead:  # the kernel's process ended after the last probe it answered
        print(f"fp8lab order: {args.kernel}: {host.dead}", file=sys.stderr)
        return EXIT_CODES["fail"]
    _print(record, args.max_lines)
    if changed:
        print(f"fp_env_changed: {changed}")
    write_json_output(args.json, {**record.to_json(), "fp_env_changed": changed})
    if changed and args.strict_env:
        print(f"fp8lab order: {args.kernel}: --strict-env: {changed}", file=sys.stderr)
        return EXIT_CODES["fail"]
    if record.verdict == "not-fixed":
        print(f"fp8lab order: {args.kernel}: no fixed order: {record.evidence[0]}", file=sys.stderr)
        return EXIT_CODES["fail"]
    return 0
