"""``fp8lab gemm-bench``: the exact reference and the f32 models against np.matmul."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from fp8lab.cli.argtypes import bounded_int_arg, multiple_of_arg, positive_int_arg, seed_arg
from fp8lab.cli.names import K_MULTIPLE
from fp8lab.cli.record_paths import write_json_output

__all__ = ["add_parser", "run"]

MAX_SIDE = 1 << 14  # a side of 2**14 is 1 GiB of float32 per operand
GEMM_SIDE = bounded_int_arg(1, MAX_SIDE, "a matrix side")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "gemm-bench",
        help="GEMM reference and model timings as ratios to np.matmul, one run",
        description="By default runs in a child process with one BLAS and numba thread.",
    )
    p.add_argument(
        "-m", "--m", dest="m", type=GEMM_SIDE, default=1024, help="rows of A (default 1024)"
    )
    p.add_argument(
        "-n",
        "--n",
        dest="n",
        type=multiple_of_arg(K_MULTIPLE, MAX_SIDE),
        default=1024,
        help=f"rows of B, a multiple of {K_MULTIPLE} (default 1024)",
    )
    p.add_argument(
        "-k",
        "--k",
        dest="k",
        type=multiple_of_arg(K_MULTIPLE, MAX_SIDE),
        default=1024,
        help=f"shared K, a multiple of {K_MULTIPLE} (default 1024)",
    )
    p.add_argument(
        "--repeats", type=positive_int_arg, default=3, help="timings per path; best is kept"
    )
    p.add_argument("--seed", type=seed_arg, default=2024, help="seed of the random operands")
    p.add_argument("--no-kernel", action="store_true", help="skip the slow kernel port")
    p.add_argument("--threads", action="store_true", help="keep BLAS threads (no pinning)")
    p.add_argument("--json", "--out", dest="json", help="write the rows here ('-' for stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one row per timed path."""
    from fp8lab.bench.gemm import run_gemm_bench, run_gemm_bench_pinned

    bench = run_gemm_bench if args.threads else run_gemm_bench_pinned
    rows = bench(
        args.m,
        args.n,
        args.k,
        repeats=args.repeats,
        seed=args.seed,
        include_kernel=not args.no_kernel,
    )
    pinned = "BLAS threads as found" if args.threads else "1 BLAS thread"
    print(f"{args.m}x{args.n}x{args.k}, {pinned}, best of {args.repeats}")
    print(f"{'path':<34} {'seconds':>9}  {'x baseline':>10}  baseline")
    for r in rows:
        print(f"{r.name:<34} {r.seconds:>9.4f}  {r.ratio:>10.2f}  {r.baseline}")
    payload = {"m": args.m, "n": args.n, "k": args.k, "rows": [asdict(r) for r in rows]}
    write_json_output(args.json, payload)
    return 0
