"""``fp8lab order``: infer a kernel's accumulation order (FPRev) and name its family."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError, load_matmul_kernel, write_json_output
from fp8lab.cli.names import K_MULTIPLE, ORDER_METHODS
from fp8lab.exit_codes import EXIT_CODES
from fp8lab.importing import ImportSpecError, import_object

if TYPE_CHECKING:
    from fp8lab.gemm.order import LcaProbe

__all__ = ["add_parser", "run"]

KINDS = ("fp8", "f32-matmul", "sum")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "order",
        help="infer a kernel's summation tree (FPRev) and name its family",
        description=(
            "Exit 0 with the tree, 1 when the kernel faults or its outputs fit no "
            "summation tree, 2 for bad usage."
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
        "--batch",
        action="store_true",
        help="ask one question per row (f32) or diagonal output (fp8) per call; "
        "assumes every output sums alike",
    )
    p.add_argument("--max-lines", type=int, default=40, help="lines of the drawn tree")
    p.add_argument("--json", "--out", dest="json", help="write the record here ('-' for stdout)")
    p.set_defaults(run=run)


def _probe(args: argparse.Namespace) -> LcaProbe:
    from fp8lab.gemm.order import F32MatmulProbe, Fp8MatmulProbe, SumProbe
    from fp8lab.kernels.shared import is_shared_spec

    k, m, n = args.k, args.m, args.n
    if k < 2:
        raise CliError(f"--k must be at least 2, got {k}")
    if m < 1 or n < 1 or not (0 <= args.row < m and 0 <= args.col < n):
        raise CliError(f"want --m, --n >= 1 and the output ({args.row}, {args.col}) inside")
    if args.kind == "fp8":
        if k % K_MULTIPLE or n % K_MULTIPLE:
            raise CliError(f"--k {k} and --n {n} must be multiples of {K_MULTIPLE} (MatmulFp8)")
        kernel = load_matmul_kernel(args.kernel)
        return Fp8MatmulProbe(kernel, k, m, n, (args.row, args.col), args.batch)
    if is_shared_spec(args.kernel):
        raise CliError(f"--kernel {args.kernel}: a shared library is read --as fp8 (fp8lab_matmul)")
    try:
        func: Any = import_object(args.kernel)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None
    if args.kind == "sum":
        return SumProbe(func, k)
    return F32MatmulProbe(func, k, m, n, (args.row, args.col), args.batch)


def run(args: argparse.Namespace) -> int:
    """Print the family, the counts and the drawn tree; the record goes to --json."""
    from fp8lab.gemm.order import ProbeError, infer_order
    from fp8lab.guard import KernelFaultError

    probe = _probe(args)
    try:
        record = infer_order(probe, args.kernel, args.method)
    except (ProbeError, KernelFaultError) as exc:
        print(f"fp8lab order: {args.kernel}: {exc}", file=sys.stderr)
        return EXIT_CODES["fail"]
    family = record.family or "no known family"
    print(f"{args.kernel}: K={record.k}, probe {record.probe}, {record.method}")
    print(f"family: {family}")
    print(
        f"calls: {record.calls} ({record.queries} counts), {record.seconds:.3f} s; "
        f"max fan-in {record.tree.max_fan_in()}, depth {record.tree.depth()}"
    )
    if record.sibling_rows:
        print(
            f"sibling test: {record.sibling_nodes} fused nodes settled, "
            f"{record.sibling_rows} outputs read (counted above)"
        )
    print(record.tree.draw(args.max_lines))
    write_json_output(args.json, record.to_json())
    return 0
