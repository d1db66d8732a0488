"""``fp8lab gates``: run gates on the built-in kernels or on a user's kernel.

Every difference between gates comes from their records (:mod:`fp8lab.specs.gates`):
the options a gate takes, its kernel's kind, its built-in kernels, its bundle.
The command resolves its flags once into a
:class:`~fp8lab.specs.gate_options.GateOptions` and hands that down.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.gate_args import FLAGS, gate_options, joined, named, selected_gates
from fp8lab.cli.gate_kernels import prestart, run_foreign
from fp8lab.cli.gates_table import format_table, write_junit
from fp8lab.cli.gemm_args import add_gemm_arguments
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.names import GF_CHAINS, NAN_POLICIES
from fp8lab.cli.record_paths import write_json_output
from fp8lab.cli.scheme_args import add_scheme_arguments, file_rules
from fp8lab.specs.gates import GATES, Gate, bundle_gates, gates_taking, load

if TYPE_CHECKING:
    from fp8lab.gates import GateResult
    from fp8lab.specs.gate_options import GateOptions

# The gates' numpy side loads when a gate runs, not to build the parser (lazy CLI).

__all__ = [
    "add_parser",
    "run",
]


def _needs_help() -> str:
    return ", and ".join(
        f"{g.name} only when {joined([f for o in g.needs for f in FLAGS[o]])} are given"
        for g in GATES.values()
        if g.needs
    )


def _kernel_help() -> str:
    """What each gate calls, from the gates' records (gates that call alike share a line)."""
    by_convention: dict[str, list[str]] = {}
    for g in GATES.values():
        by_convention.setdefault(g.convention, []).append(g.name)
    calls = "; ".join(f"{'/'.join(names)}: {text}" for text, names in by_convention.items())
    return f"your kernel (default: each gate's built-in kernels). What each gate calls: {calls}"


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
        help=f"comma-separated gates from {', '.join(GATES)}, or 'all' (default G1; with a "
        f"--kernel, 'all' includes {_needs_help()})",
    )
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernel",
        metavar="MODULE:OBJ",
        help=_kernel_help(),
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
        help=f"{'/'.join(gates_taking('nan_policy'))}: the NaN policy your --kernel (or the "
        f"kernel that wrote --outputs) follows, one of {', '.join(NAN_POLICIES)} (default "
        "canonical; a --kernel is held to this flag, never to a nan_policy it declares, "
        "which the record keeps as nan_policy_declared_by_kernel)",
    )
    p.add_argument(
        "--outputs",
        metavar="DIR",
        help="check the outputs your kernel wrote into a bundle from 'fp8lab export' "
        f"(one gate, {', '.join(bundle_gates())}, with the options the bundle was exported "
        "with); the record's kernel is bundle:DIR",
    )
    p.add_argument(
        "--shard-scales",
        metavar="S,S,...",
        help="G1: also run the shard case, handing the kernel these per-shard scales as one "
        "float32 array it must collapse with max (e.g. 0.3,0.9,0.0625); by default every "
        "call gets one float32 scale",
    )
    p.add_argument("--large", action="store_true", help="G3: add the 1024x1024 cases (slow)")
    add_gemm_arguments(p)
    p.add_argument("--json", "--out", dest="json", help="write the results here ('-' for stdout)")
    p.add_argument(
        "--junit-xml",
        metavar="PATH",
        help="also write JUnit XML here: one testcase per gate case (class GATE.KERNEL)",
    )
    p.set_defaults(run=run)


def _run_bundle(gates: list[Gate], args: argparse.Namespace, options: GateOptions) -> GateResult:
    """The gate's record for the outputs in ``args.outputs`` (a bundle)."""
    from fp8lab.bundle import BundleError
    from fp8lab.bundle.replay import replay_bundle

    if len(gates) != 1 or not gates[0].bundle:
        raise CliError(f"--outputs checks one gate, {', '.join(bundle_gates())}, not {args.gate}")
    if args.kernel or args.large:
        raise CliError("--outputs checks a bundle's outputs: leave out --kernel and --large")
    (gate,) = gates
    (run,) = options.runs(gate)  # a bundle holds the calls of one run
    policy = options.nan_policy.policy.name if options.nan_policy else None
    try:
        kernel, extra = replay_bundle(Path(args.outputs), gate.name, policy, run.record)
    except BundleError as exc:
        raise CliError(f"--outputs {exc}") from None
    result: GateResult = load(gate.runner)(kernel, **run.options, **extra)
    return result


def _builtin_kernels(gate: Gate, options: dict[str, Any]) -> list[Any]:
    """A gate's own kernels for one run: the one its key names, a mapping's values, or a call's."""
    builtins: Mapping[str, Any] | Callable[..., Any] = load(gate.builtins)
    if not isinstance(builtins, Mapping):
        return list(builtins(**options))
    if gate.builtin_key:
        named = options[gate.builtin_key]
        return [builtins[str(getattr(named, "name", named))]]
    return list(builtins.values())


def _run_gate(gate: Gate, args: argparse.Namespace, options: GateOptions) -> list[GateResult]:
    runs = options.runs(gate)
    if args.kernel:  # foreign code runs in a child: its exit cannot become ours
        return run_foreign(gate, args, runs)
    runner = load(gate.runner)
    return [runner(k, **r.options) for r in runs for k in _builtin_kernels(gate, r.options)]


def run(args: argparse.Namespace) -> int:
    """Run the selected gates; return the documented exit status."""
    with contextlib.ExitStack() as stack:
        args.hosts = prestart(args, stack)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from fp8lab.gates.records import exit_code

    own = file_rules(args)  # the rule file, read once
    gates = selected_gates(args, own)
    for gate in gates if args.outputs else []:
        missing = [o for o in gate.needs if not named(args, o, own)]
        if missing:
            flags = joined([f for o in missing for f in FLAGS[o]])
            raise CliError(f"{gate.name} with --outputs needs {flags} (what the kernel computes)")
    options = gate_options(args, gates, own)
    if args.outputs:
        results = [_run_bundle(gates, args, options)]
    else:
        results = [r for g in gates for r in _run_gate(g, args, options)]
    print(format_table(results))
    write_json_output(args.json, [r.to_dict() for r in results])
    if args.junit_xml:
        write_junit(args.junit_xml, results)
    return exit_code(results)
