"""GQ's ``--scheme``, ``--rule`` and ``--rule-file``: the arguments and the (scheme, rule) pairs."""

from __future__ import annotations

import argparse
from typing import Any

from fp8lab.cli.common import CliError
from fp8lab.cli.names import GQ_SCHEMES

__all__ = [
    "add_scheme_arguments",
    "file_rules",
    "scheme_options",
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
        "te-nvfp4-divide prints); --rule then names one of them, and the scheme "
        "follows from its granularity, block and scale format (nvfp4: from its order key)",
    )
    p.add_argument(
        "--rule",
        metavar="NAME",
        help="GQ: the scale rule your kernel follows, e.g. vllm-per-group (the list: "
        "docs/rules.md); default with no --kernel: every rule of the scheme, "
        "each on its port",
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
    from fp8lab.specs.scale_rules import RULES
    from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS

    try:
        rules = read_any_rule_file(args.rule_file)
    except ValueError as exc:
        raise CliError(f"--rule-file {exc}") from None
    found: dict[str, Any] = {}
    for rule in rules:
        if rule.name in RULES or rule.name in NVFP4_RULES:
            raise CliError(f"--rule-file: {rule.name!r} is a built-in rule's name; rename it")
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


def scheme_options(args: argparse.Namespace) -> list[dict[str, Any]]:
    """GQ's (scheme, rule) pairs: the one named, or every built-in rule that matches.

    A rule of ``--rule-file`` comes as its :class:`~fp8lab.specs.scale_rules.ScaleRule`
    under ``rule`` (the gates take either) and its name under ``rule_name``.
    """
    from fp8lab.gates import GQ_RULES
    from fp8lab.specs.nvfp4_rules import NVFP4_RULES

    own = file_rules(args)
    if own and (args.rule is None or args.rule not in own):
        raise CliError(f"--rule-file: name one of its rules with --rule: {', '.join(own)}")
    if args.rule in own:
        scheme, rule = own[args.rule]
        if args.scheme is not None and args.scheme != scheme:
            raise CliError(f"--rule {args.rule} is a {scheme} rule, not {args.scheme}")
        if not args.kernel:
            raise CliError(
                "--rule-file rules are checked on your --kernel; bundles and the built-in "
                "ports hold the built-in rules"
            )
        return [{"scheme": scheme, "rule": rule, "rule_name": rule.name}]
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
        {"scheme": scheme, "rule": rule, "rule_name": rule}
        for scheme, rules in GQ_RULES.items()
        for rule in rules
        if args.scheme in (None, scheme) and args.rule in (None, rule)
    ]
