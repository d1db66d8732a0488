"""The gates' flags, resolved once into one :class:`~fp8lab.specs.gate_options.GateOptions`.

Each flag is checked here and nowhere else: a flag no selected gate takes is
refused, naming the gates that take it (from their records).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.gemm_args import gemm_options
from fp8lab.cli.scheme_args import (
    names_static_rule,
    scheme_choices,
    scheme_named,
    static_rule_choice,
)
from fp8lab.specs.gates import GATES, Gate, gates_taking

if TYPE_CHECKING:
    from fp8lab.specs.gate_options import ChainChoice, GateOptions
    from fp8lab.specs.nan import HeldNanPolicy

__all__ = ["FLAGS", "gate_options", "joined", "named", "selected_gates"]

# the flags that set each option a gate can take (fp8lab.specs.gates.OPTIONS)
FLAGS = {
    "nan_policy": ("--nan-policy",),
    "shard_scales": ("--shard-scales",),
    "large": ("--large",),
    "gemm": ("--gemm", "--gemm-file", "--order-from", "--warmup"),
    "chains": ("--chain", "--recipe"),
    "schemes": ("--scheme", "--rule"),
    "static_rule": ("--rule",),
}


def joined(words: list[str] | tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} and {words[-1]}"


def _chain_choices(args: argparse.Namespace) -> list[ChainChoice]:
    """GF's (chain, recipe) pairs: the one named, or every built-in port that matches."""
    from fp8lab.specs.chain_catalogue import RECIPES
    from fp8lab.specs.gate_options import ChainChoice

    if args.recipe is not None and args.recipe not in RECIPES:
        raise CliError(f"unknown --recipe {args.recipe!r}; choose from {', '.join(RECIPES)}")
    if args.recipe is not None and args.chain and RECIPES[args.recipe].chain != args.chain:
        raise CliError(f"--recipe {args.recipe} is a {RECIPES[args.recipe].chain} recipe")
    if args.kernel and (args.chain is None or args.recipe is None):
        raise CliError("GF with --kernel needs --chain and --recipe (what your kernel declares)")
    return [
        ChainChoice(c.chain, n)
        for n, c in RECIPES.items()
        if (args.recipe in (None, n)) and (args.chain in (None, c.chain))
    ]


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


def _given(args: argparse.Namespace, option: str, own: dict[str, Any]) -> bool:
    """Whether any flag of ``option`` is on the command line (a value, or a switch that is on).

    A static rule (``--rule`` or a rule file's) is G1's, any other GQ's.
    """
    ruled = bool(args.rule or args.rule_file)
    if option == "static_rule":
        return ruled and names_static_rule(args, own)
    if option == "schemes":
        return bool(args.scheme) or (ruled and not names_static_rule(args, own))
    values = [getattr(args, f[2:].replace("-", "_"), None) for f in FLAGS[option]]
    return any(v is not None and v is not False for v in values)


def named(args: argparse.Namespace, option: str, own: dict[str, Any]) -> bool:
    """Whether the command names the one choice of ``option`` a kernel computes."""
    if option == "schemes":
        return scheme_named(args, own)
    return all(getattr(args, f[2:].replace("-", "_"), None) is not None for f in FLAGS[option])


def selected_gates(args: argparse.Namespace, own: dict[str, Any]) -> list[Gate]:
    """The gates ``--gate`` names; ``all`` leaves out those a --kernel lacks the options of."""
    names = [g.strip() for g in args.gate.split(",") if g.strip()]
    if names == ["all"]:
        names = [
            n
            for n, g in GATES.items()
            if not args.kernel or all(named(args, o, own) for o in g.needs)
        ]
    unknown = [g for g in names if g not in GATES]
    if unknown or not names:
        raise CliError(
            f"unknown or empty --gate {args.gate!r}; choose from {', '.join(GATES)} or all"
        )
    return [GATES[n] for n in names]


def _held_nan_policy(args: argparse.Namespace) -> HeldNanPolicy:
    """A --kernel's NaN policy: --nan-policy, else its source's declaration, else canonical.

    The declaration is read from the ``MODULE:OBJ``'s source text before the
    kernel runs (:mod:`fp8lab.kernels.sources.declared`), never from its process.

    Raises:
        CliError: for a declaration that names no policy.
    """
    import os
    import sys

    from fp8lab.kernels.sources.declared import source_declaration
    from fp8lab.kernels.sources.shared_source import is_shared_source
    from fp8lab.specs.nan import DEFAULT_NAN_POLICY, NAN_POLICIES, HeldNanPolicy, nan_policy_help

    if args.nan_policy is not None:
        return HeldNanPolicy(NAN_POLICIES[args.nan_policy], "command-line")
    if args.kernel and not is_shared_source(args.kernel):
        said = source_declaration(args.kernel, "nan_policy", [os.getcwd(), *sys.path])
        if said is not None and said not in NAN_POLICIES:
            raise CliError(
                f"--kernel {args.kernel}: its source declares nan_policy {said!r:.40}; "
                f"{nan_policy_help()}"
            )
        if said is not None:
            return HeldNanPolicy(NAN_POLICIES[said], "kernel-source")
    return HeldNanPolicy(NAN_POLICIES[DEFAULT_NAN_POLICY], "default")


def gate_options(args: argparse.Namespace, gates: list[Gate], own: dict[str, Any]) -> GateOptions:
    """The command's one options value: each flag checked and resolved once, here.

    Raises:
        CliError: for a flag no selected gate takes, or a bad value.
    """
    from fp8lab.specs.gate_options import GateOptions
    from fp8lab.specs.nan import NAN_POLICIES

    if args.nan_policy is not None and not (args.kernel or args.outputs):
        raise CliError("--nan-policy states your kernel's policy; give --kernel or --outputs")
    takes = {o for g in gates for o in g.options}
    if "static_rule" in takes and "schemes" not in takes:
        static_rule_choice(args, own)  # a --rule here must be G1's: say so, not "GQ only"
    for option, flags in FLAGS.items():
        if _given(args, option, own) and option not in takes:
            verb = "apply" if len(flags) > 1 else "applies"
            raise CliError(f"{joined(flags)} {verb} to {joined(gates_taking(option))} only")
    held = None
    if args.nan_policy is not None and args.nan_policy not in NAN_POLICIES:
        known = ", ".join(NAN_POLICIES)
        raise CliError(f"unknown --nan-policy {args.nan_policy!r}; one of {known}")
    if "nan_policy" in takes and (args.kernel or args.outputs):  # foreign code: never its word
        held = _held_nan_policy(args)
    return GateOptions(
        nan_policy=held,
        shard_scales=_shard_scales(args.shard_scales) if args.shard_scales else (),
        large=args.large,
        gemm=gemm_options(args) if "gemm" in takes else {},
        chains=tuple(_chain_choices(args)) if "chains" in takes else (),
        schemes=tuple(scheme_choices(args, own)) if "schemes" in takes else (),
        static_rule=static_rule_choice(args, own)
        if "static_rule" in takes and ("schemes" not in takes or names_static_rule(args, own))
        else None,
    )
