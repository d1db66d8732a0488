"""``fp8lab gates``: run gates on the built-in kernels or on a user's kernel."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError, write_json_output
from fp8lab.cli.gate_kernels import prestart, run_foreign
from fp8lab.cli.gates_table import format_table, write_junit
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.kernel_args import (
    add_scheme_arguments,
    scheme_options,
)
from fp8lab.cli.names import BUNDLE_GATES, GATE_NAMES, GF_CHAINS, NAN_POLICIES

if TYPE_CHECKING:
    from fp8lab.gates import GateResult

# The gates' numpy side loads when a gate runs, not to build the parser (lazy CLI).

__all__ = [
    "add_parser",
    "run",
]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "gates",
        help="run gates against a kernel",
        description="A --kernel runs in a child process: one that exits, is killed or "
        "raises is a FAIL of its gate.",
    )
    p.add_argument(
        "--gate",
        "--gates",
        dest="gate",
        default="G1",
        help=f"comma-separated gates from {', '.join(GATE_NAMES)}, or 'all' (default G1; with a "
        "--kernel, 'all' includes GF only when --chain and --recipe are given, and GQ only "
        "when --scheme and --rule are given)",
    )
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernel",
        metavar="MODULE:OBJ",
        help="your kernel (default: each gate's built-in kernels; upstream for G2 and G2h). "
        "For G1/G2/G2h a QuantKernel "
        "object (name, quantize) or FUNC(x, scale) -> uint8 codes; for G3 a MatmulKernel "
        "object (name, matmul, optional spec) or FUNC(a_codes, b_codes, s_in, s_w, "
        "out_dtype) -> [M,N] float32 or bfloat16, checked against vllm.cpp's model; for GF "
        "a function with the --chain signature (docs/gates/gf.md), optionally with a "
        "trace method for the prefix checks; for GQ FUNC(x) -> (codes, scales), for nvfp4 "
        "FUNC(x, global_scale), or PATH.so:SYMBOL with fp8lab_scheme_quant's signature "
        "(fp8lab_nvfp4_quant's for nvfp4) (docs/gates/gq.md)",
    )
    p.add_argument(
        "--chain",
        choices=GF_CHAINS,
        help="GF: the fused chain your kernel computes (rmsnorm, rmsnorm-gated, silu-mul); "
        "default with no --kernel: every built-in port",
    )
    p.add_argument(
        "--recipe",
        metavar="NAME",
        help="GF: the recipe your kernel declares, e.g. vllm-cuda-fused-add-rmsnorm-static-fp8 "
        "(the list: docs/gates/gf.md)",
    )
    add_scheme_arguments(p)
    add_isolation_arguments(p)
    p.add_argument(
        "--arrays",
        choices=("numpy", "torch", "triton"),
        default=None,
        help="what your kernel takes and returns: numpy arrays, or torch tensors (float32 or "
        "bfloat16 in; a float8 tensor or uint8 codes back; needs torch); triton: torch "
        "tensors, and on the CPU your @triton.jit kernels run in Triton's interpreter with "
        "the GPU's float8 rounding (needs triton). Default: the kernel's own arrays "
        "attribute, else numpy",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="with --arrays torch or triton: the device the tensors are on (default cpu; "
        "cuda needs a CUDA device torch can see, and runs Triton kernels compiled)",
    )
    p.add_argument(
        "--nan-policy",
        metavar="NAME",
        help=f"G1/G2: the NaN policy your kernel follows, one of {', '.join(NAN_POLICIES)} "
        "(default: what the kernel declares in its nan_policy attribute, else canonical; "
        "with --outputs, canonical)",
    )
    p.add_argument(
        "--outputs",
        metavar="DIR",
        help="check the outputs your kernel wrote into a bundle from 'fp8lab export' "
        "(one gate, G1, G3 or GQ; GQ with the bundle's --scheme and --rule); the record's "
        "kernel is bundle:DIR",
    )
    p.add_argument(
        "--shard-scales",
        metavar="S,S,...",
        help="G1: also run the shard case, handing the kernel these per-shard scales as one "
        "float32 array it must collapse with max (e.g. 0.3,0.9,0.0625); by default every "
        "call gets one float32 scale",
    )
    p.add_argument("--large", action="store_true", help="G3: add the 1024x1024 cases (slow)")
    p.add_argument("--json", "--out", dest="json", help="write the results here ('-' for stdout)")
    p.add_argument(
        "--junit-xml",
        metavar="PATH",
        help="also write JUnit XML here: one testcase per gate case (class GATE.KERNEL)",
    )
    p.set_defaults(run=run)


def _run_bundle(names: list[str], args: argparse.Namespace) -> list[GateResult]:
    """The gate's record for the outputs in ``args.outputs`` (a bundle)."""
    from fp8lab.bundle import BundleError, load_bundle
    from fp8lab.gates import GATES
    from fp8lab.kernels import DEFAULT_NAN_POLICY

    if len(names) != 1 or names[0] not in BUNDLE_GATES:
        raise CliError(f"--outputs checks one gate, {', '.join(BUNDLE_GATES)}, not {args.gate}")
    if args.kernel or args.large:
        raise CliError("--outputs checks a bundle's outputs: leave out --kernel and --large")
    if names[0] == "GQ" and (args.scheme is None or args.rule is None):
        raise CliError("GQ with --outputs needs --scheme and --rule (what the kernel computes)")
    try:
        kernel = load_bundle(Path(args.outputs), names[0], args.nan_policy or DEFAULT_NAN_POLICY)
    except BundleError as exc:
        raise CliError(f"--outputs {exc}") from None
    if names[0] != "GQ":
        return [GATES[names[0]](kernel)]
    if (kernel.scheme, kernel.rule) != (args.scheme, args.rule):
        raise CliError(
            f"--outputs {args.outputs} holds scheme {kernel.scheme}, rule {kernel.rule}, "
            f"not --scheme {args.scheme} --rule {args.rule}"
        )
    from fp8lab.gates.gq import GqCall

    # a loaded bundle holds all of this version's GQ calls or none (then GQ examined nothing)
    calls: list[GqCall] | None = None if kernel.cases else []
    return [GATES["GQ"](kernel, scheme=args.scheme, rule=args.rule, calls=calls)]


def _chain_options(args: argparse.Namespace) -> list[dict[str, str]]:
    """GF's (chain, recipe) pairs: the one named, or every built-in port that matches."""
    from fp8lab.specs.chain_catalogue import RECIPES

    if args.recipe is not None and args.recipe not in RECIPES:
        raise CliError(f"unknown --recipe {args.recipe!r}; choose from {', '.join(RECIPES)}")
    if args.recipe is not None and args.chain and RECIPES[args.recipe].chain != args.chain:
        raise CliError(f"--recipe {args.recipe} is a {RECIPES[args.recipe].chain} recipe")
    if args.kernel and (args.chain is None or args.recipe is None):
        raise CliError("GF with --kernel needs --chain and --recipe (what your kernel declares)")
    pairs = [
        {"chain": c.chain, "recipe": n}
        for n, c in RECIPES.items()
        if (args.recipe in (None, n)) and (args.chain in (None, c.chain))
    ]
    return pairs


def _shard_scales(text: str) -> tuple[float, ...]:
    """``--shard-scales``: two or more positive finite float32 scales.

    Raises:
        CliError: naming the value that is not one.
    """
    import math

    values = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise CliError(f"--shard-scales: {part.strip()!r} is not a number") from None
        if not (math.isfinite(value) and value > 0):
            raise CliError(f"--shard-scales: {part.strip()} is not a positive finite scale")
        values.append(value)
    if len(values) < 2:
        raise CliError("--shard-scales: give two or more per-shard scales, e.g. 0.3,0.9,0.0625")
    return tuple(values)


def _run_gate(name: str, args: argparse.Namespace) -> list[GateResult]:
    from fp8lab.gates import (
        CHAIN_GATES,
        CUDA_GATE_CPU_KERNEL,
        CUDA_GATES,
        GATES,
        MATMUL_GATES,
        SCHEME_GATES,
    )
    from fp8lab.kernels import BUILTIN_KERNELS
    from fp8lab.kernels.chain import PORTS
    from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
    from fp8lab.kernels.scheme import SCHEME_PORTS

    if name in SCHEME_GATES:
        pairs = scheme_options(args)
        calls = [{"scheme": o["scheme"], "rule": o["rule"]} for o in pairs]
        if args.kernel:  # the record names the kernel as the user did, and (even when the
            # kernel's process died before a record) the scheme and rule it was held to
            named = [{**o, "kernel_name": args.kernel} for o in calls]
            return [
                dataclasses.replace(r, scheme=o["scheme"], rule=o["rule_name"])
                for o, r in zip(pairs, run_foreign(name, args, named), strict=True)
            ]
        return [GATES[name](SCHEME_PORTS[o["rule"]], **o) for o in calls]
    if name in CHAIN_GATES:
        pairs = _chain_options(args)
        if args.kernel:
            return run_foreign(name, args, pairs)
        return [GATES[name](PORTS[o["recipe"]], **o) for o in pairs]
    options: dict[str, Any] = {"large": args.large} if name in MATMUL_GATES else {}
    if name == "G1" and args.shard_scales:
        options["shard_scales"] = _shard_scales(args.shard_scales)
    if args.kernel:  # foreign code runs in a child: its exit cannot become ours
        return run_foreign(name, args, [options])
    kernels: list[Any] = list(
        (BUILTIN_MATMUL_KERNELS if name in MATMUL_GATES else BUILTIN_KERNELS).values()
    )
    if name in CUDA_GATES:  # fp8lab's CUDA kernel is the upstream quant: compare like with like
        kernels = [BUILTIN_KERNELS[CUDA_GATE_CPU_KERNEL]]
    return [GATES[name](k, **options) for k in kernels]


def run(args: argparse.Namespace) -> int:
    """Run the selected gates; return the documented exit status."""
    with contextlib.ExitStack() as stack:
        args.hosts = prestart(args, stack)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from fp8lab.gates import CHAIN_GATES, GATES, MATMUL_GATES, SCHEME_GATES, exit_code

    names = [g.strip() for g in args.gate.split(",") if g.strip()]
    if names == ["all"]:  # a --kernel without --chain/--recipe is not a chain kernel
        chained = not args.kernel or (args.chain and args.recipe)
        schemed = not args.kernel or (args.scheme and args.rule)
        names = [
            g
            for g in GATES
            if (chained or g not in CHAIN_GATES) and (schemed or g not in SCHEME_GATES)
        ]
    unknown = [g for g in names if g not in GATES]
    if unknown or not names:
        raise CliError(
            f"unknown or empty --gate {args.gate!r}; choose from {', '.join(GATES)} or all"
        )
    if args.nan_policy is not None and not (args.kernel or args.outputs):
        raise CliError("--nan-policy states your kernel's policy; give --kernel or --outputs")
    if args.nan_policy is not None and all(
        g in MATMUL_GATES | CHAIN_GATES | SCHEME_GATES for g in names
    ):
        raise CliError("--nan-policy applies to G1 and G2 only")
    if (args.chain or args.recipe) and not any(g in CHAIN_GATES for g in names):
        raise CliError("--chain and --recipe apply to GF only")
    if args.shard_scales and "G1" not in names:
        raise CliError("--shard-scales applies to G1 only")
    if (args.scheme or args.rule) and not any(g in SCHEME_GATES for g in names):
        raise CliError("--scheme and --rule apply to GQ only")
    if any(g in SCHEME_GATES for g in names):
        scheme_options(args)  # refuse a bad --scheme/--rule before any gate runs
    if args.outputs:
        results = _run_bundle(names, args)
    else:
        results = [r for g in names for r in _run_gate(g, args)]
    print(format_table(results))
    write_json_output(args.json, [r.to_dict() for r in results])
    if args.junit_xml:
        write_junit(args.junit_xml, results)
    return exit_code(results)
