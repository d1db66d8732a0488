"""GQ's ``--scheme``, ``--rule`` and ``--rule-file``: the arguments and the (scheme, rule) pairs.

The rule file is read once per command (:func:`file_rules`); a file that holds
one rule names it, so ``--rule`` may be left out.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.names import GQ_SCHEMES

if TYPE_CHECKING:
    from fp8lab.specs.gate_options import SchemeChoice
    from fp8lab.specs.scale_rules import ScaleRule

__all__ = [
    "add_scheme_arguments",
    "file_rules",
    "names_static_rule",
    "named_rule",
    "scheme_choices",
    "scheme_named",
    "static_rule_choice",
]


def add_scheme_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--scheme`` and ``--rule`` to the ``gates`` parser."""
    p.add_argument(
        "--scheme",
        metavar="NAME",
        help=f"GQ: the scheme your kernel computes, one of {', '.join(GQ_SCHEMES)}; default "
        "with no --kernel: every scheme",
    )
    p.add_argument(
        "--rule-file",
        metavar="PATH",
        help="GQ: a TOML file of your own scale rules ([[rule]] tables, the keys of "
        "fp8lab/specs/rules/scale_rules.toml, or for nvfp4 the keys fp8lab rules show "
        "te-nvfp4-divide prints); --rule then names one of them (a file of one rule "
        "needs no --rule), and the scheme follows from its granularity, block and scale "
        "format (nvfp4: from its order key). G1: a static rule of your own "
        '(scale_source = "given"; fp8lab rules show vllm-cpp-static prints one)',
    )
    p.add_argument(
        "--rule",
        metavar="NAME",
        help="GQ: the scale rule your kernel follows, e.g. vllm-per-group (the list: "
        "docs/rules.md); default with no --kernel: every rule of the scheme, "
        "each on its port. G1: the static rule, e.g. onnx-quantizelinear-e4m3fn "
        "(fp8lab rules list --scheme static; default vllm-cpp-static, the seed's)",
    )


def file_rules(args: argparse.Namespace) -> dict[str, Any]:
    """The rules of ``--rule-file`` by name (none without it), each with its GQ scheme.

    Raises:
        CliError: for a file that cannot be read or parsed, or a rule whose layout
            (granularity, block, scale format) is no GQ scheme's, or that reuses a
            built-in rule's name.
    """
    if not getattr(args, "rule_file", None):
        return {}
    from fp8lab.specs.nvfp4_rule_file import read_any_rule_file
    from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
    from fp8lab.specs.rule_axes import ScaleSource
    from fp8lab.specs.scale_rules import RULES
    from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS
    from fp8lab.specs.static_rules import STATIC_RULES

    try:
        rules = read_any_rule_file(args.rule_file)
    except ValueError as exc:
        raise CliError(f"--rule-file {exc}") from None
    found: dict[str, Any] = {}
    for rule in rules:
        if rule.name in RULES or rule.name in NVFP4_RULES or rule.name in STATIC_RULES:
            raise CliError(f"--rule-file: {rule.name!r} is a built-in rule's name; rename it")
        if getattr(rule, "scale_source", None) is ScaleSource.GIVEN:
            found[rule.name] = ("static", rule)  # G1's
            continue
        if isinstance(rule, Nvfp4ScaleRule):
            if rule.element_source is None:
                raise CliError(f"--rule-file: {rule.name}: GQ needs its element_source")
            found[rule.name] = ("nvfp4", rule)
            continue
        shape = (rule.granularity, rule.block, rule.scale_format)
        schemes = [s for s, layout in SCHEME_LAYOUTS.items() if layout == shape]
        if not schemes:
            raise CliError(f"--rule-file: {rule.name}: no GQ scheme has its layout {shape}")
        found[rule.name] = (schemes[0], rule)
    return found


def named_rule(args: argparse.Namespace, own: dict[str, Any]) -> str | None:
    """The rule named: ``--rule``, else the one rule of a ``--rule-file`` that holds one."""
    if args.rule is None and len(own) == 1:
        return next(iter(own))
    return args.rule  # type: ignore[no-any-return]


def scheme_named(args: argparse.Namespace, own: dict[str, Any]) -> bool:
    """Whether the command names one scheme and rule (a rule-file rule names its scheme)."""
    rule = named_rule(args, own)
    if rule is not None and names_static_rule(args, own):
        return False  # G1's
    return rule is not None and (args.scheme is not None or rule in own)


def scheme_choices(args: argparse.Namespace, own: dict[str, Any]) -> list[SchemeChoice]:
    """GQ's (scheme, rule) pairs, each rule as its object: the one named, or every built-in one.

    ``own`` is :func:`file_rules`' reading of ``--rule-file``, made once by the caller.

    Raises:
        CliError: for an unknown or mismatched scheme or rule, a rule-file rule
            without a kernel, or a ``--kernel`` without one scheme and rule.
    """
    from fp8lab.gates import GQ_RULES
    from fp8lab.specs.gate_options import SchemeChoice
    from fp8lab.specs.nvfp4_rules import NVFP4_RULES
    from fp8lab.specs.scale_rules import RULES

    rule_name = named_rule(args, own)
    if own and rule_name not in own:
        raise CliError(f"--rule-file: name one of its rules with --rule: {', '.join(own)}")
    if names_static_rule(args, own):
        raise CliError(f"--rule {rule_name} is a static rule (a given scale): G1 checks it")
    if rule_name in own:
        scheme, rule = own[rule_name]
        if args.scheme is not None and args.scheme != scheme:
            raise CliError(f"--rule {rule_name} is a {scheme} rule, not {args.scheme}")
        if not args.kernel:
            raise CliError(
                "--rule-file rules are checked on your --kernel; bundles and the built-in "
                "ports hold the built-in rules"
            )
        return [SchemeChoice(scheme, rule)]
    if args.scheme is not None and args.scheme not in GQ_RULES:
        raise CliError(f"unknown --scheme {args.scheme!r}; choose from {', '.join(GQ_RULES)}")
    known = [r for rules in GQ_RULES.values() for r in rules]
    if args.rule in NVFP4_RULES and args.rule not in known:
        raise CliError(
            f"--rule {args.rule} models the NVFP4 block scale only (its kernel's element path "
            f"was not read); GQ checks {', '.join(GQ_RULES['nvfp4'])}"
        )
    if args.rule is not None and args.rule not in known:
        raise CliError(f"unknown --rule {args.rule!r}; choose from {', '.join(known)}")
    if args.scheme is not None and args.rule is not None and args.rule not in GQ_RULES[args.scheme]:
        valid = ", ".join(GQ_RULES[args.scheme])
        raise CliError(f"--rule {args.rule} is not a {args.scheme} rule; choose from {valid}")
    if args.kernel and (args.scheme is None or args.rule is None):
        raise CliError("GQ with --kernel needs --scheme and --rule (what your kernel computes)")
    return [
        SchemeChoice(scheme, NVFP4_RULES[rule] if scheme == "nvfp4" else RULES[rule])
        for scheme, rules in GQ_RULES.items()
        for rule in rules
        if args.scheme in (None, scheme) and args.rule in (None, rule)
    ]


def names_static_rule(args: argparse.Namespace, own: dict[str, Any]) -> bool:
    """Whether the rule named is a static one (a built-in, or a rule file's with a given scale)."""
    from fp8lab.specs.static_rules import STATIC_RULES

    rule = named_rule(args, own)
    return rule in STATIC_RULES or (rule in own and own[rule][0] == "static")


def static_rule_choice(args: argparse.Namespace, own: dict[str, Any]) -> ScaleRule | None:
    """G1's rule: the static rule named (built in, or of ``--rule-file``), else None.

    Raises:
        CliError: for a rule that is no static rule (GQ's), a rule-file rule with
            no --kernel to hold to it, or one with --outputs (a bundle holds the
            default rule's cases).
    """
    from fp8lab.specs.static_rules import STATIC_RULES

    rule = named_rule(args, own)
    if rule is None:
        return None
    if own and rule not in own:
        raise CliError(f"--rule-file: name one of its rules with --rule: {', '.join(own)}")
    if rule in own and own[rule][0] != "static":
        raise CliError(
            f"--rule {rule} computes its scale (a {own[rule][0]} rule): GQ checks it; "
            'a G1 rule has scale_source = "given"'
        )
    if not names_static_rule(args, own):
        raise CliError(
            f"--rule {rule!r} is no static rule; G1 takes one of {', '.join(STATIC_RULES)}, "
            'or a rule file\'s with scale_source = "given"'
        )
    if args.outputs:
        raise CliError("--outputs: a G1 bundle holds the default rule's cases; leave out --rule")
    if rule in own:
        if not args.kernel:
            raise CliError("--rule-file rules are checked on your --kernel")
        found: ScaleRule = own[rule][1]
        return found
    return STATIC_RULES[rule]
