"""``fp8lab rules``: the named scale rules, and one of them as a rule file.

``list`` prints each scheme's rules with what each describes (``static``:
G1's static rules); ``show NAME``
prints a rule as the TOML that ``fp8lab gates --gate GQ --rule-file`` reads,
to copy and edit into a rule of one's own (``--splits``: its split table
instead, :mod:`fp8lab.populations.rule_splits`); ``infer`` finds the declarations
that reproduce a kernel (:mod:`fp8lab.cli.rules_infer_cmd`). The NVFP4 rules are declared in
code (:mod:`fp8lab.specs.nvfp4_rules`); ``show`` prints one in the form of an NVFP4
rule file (:mod:`fp8lab.specs.nvfp4_rule_file`).
"""

from __future__ import annotations

import argparse

from fp8lab.cli.common import CliError
from fp8lab.cli.rules_infer_cmd import add_infer_arguments, run_infer

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "rules",
        help="list the scale rules, print one as a rule file, or infer a kernel's",
        description="fp8lab rules list [--scheme S]; fp8lab rules show NAME (TOML on stdout, "
        "the form --rule-file reads); fp8lab rules infer --scheme S --kernel MODULE:FUNC "
        "[--write-rule PATH] [--json PATH] (the declarations that reproduce every GQ call).",
    )
    p.add_argument(
        "action",
        choices=("list", "show", "infer"),
        help="list the rules, show one, or infer the rule a --kernel follows",
    )
    p.add_argument("name", nargs="?", help="show: the rule's name (see: fp8lab rules list)")
    p.add_argument(
        "--splits",
        action="store_true",
        help="show: the rule's split table (where GQ tells the rule from each one-axis variant)",
    )
    p.add_argument(
        "--scheme",
        metavar="S",
        help="list: only this scheme's rules; infer: the kernel's scheme (nvfp4 too)",
    )
    add_infer_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List the rules, or print one as a rule file; return the exit status."""
    from fp8lab.gates.gq import GQ_RULES
    from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text
    from fp8lab.specs.nvfp4_rules import NVFP4_RULES
    from fp8lab.specs.scale_rules import RULES, rule_text
    from fp8lab.specs.static_rules import STATIC_RULES

    listed = {**GQ_RULES, "static": tuple(STATIC_RULES)}

    if args.action == "infer":
        return run_infer(args)
    if args.kernel is not None or args.write_rule is not None or args.json is not None:
        raise CliError("--kernel, --write-rule and --json go with rules infer")
    if args.splits and args.action != "show":
        raise CliError("--splits goes with rules show")
    if args.action == "show":
        if args.name is None or args.scheme is not None:
            raise CliError("rules show takes one rule NAME and no --scheme")
        if args.splits:
            return _show_splits(args.name)
        if args.name in NVFP4_RULES:
            print(nvfp4_rule_text(NVFP4_RULES[args.name]), end="")
            return 0
        rule = RULES.get(args.name) or STATIC_RULES.get(args.name)
        if rule is None:
            known = ", ".join([*RULES, *NVFP4_RULES, *STATIC_RULES])
            raise CliError(f"unknown rule {args.name!r}; one of {known}")
        print(rule_text(rule), end="")
        return 0
    if args.name is not None:
        raise CliError("rules list takes no NAME (see: fp8lab rules show NAME)")
    if args.scheme is not None and args.scheme not in listed:
        raise CliError(f"unknown scheme {args.scheme!r}; one of {', '.join(listed)}")
    width = max(len(n) for names in listed.values() for n in names)
    for scheme, names in listed.items():
        if args.scheme not in (None, scheme):
            continue
        for name in names:
            found = RULES.get(name) or STATIC_RULES.get(name) or NVFP4_RULES[name]
            print(f"{scheme:<10} {name:<{width}}  {found.source}")
    return 0


def _show_splits(name: str) -> int:
    """Print rule ``name``'s split table, one line per axis value."""
    from fp8lab.populations.split_cache import cached_split_table
    from fp8lab.specs.nvfp4_rules import NVFP4_RULES
    from fp8lab.specs.scale_rules import get_rule

    if name in NVFP4_RULES:
        raise CliError(f"{name} is an NVFP4 rule: split tables are for scale rules")
    try:
        rule = get_rule(name)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(
        f"{rule.name} against each {rule.name}[AXIS=VALUE]: calls of GQ's seeded cases that "
        "split them, then the amaxes GQ adds (float32 bits)"
    )
    print(f"{'axis':<17} {'value':<22} {'status':<11} {'calls':>5}  amaxes float32 | bfloat16")
    for s in cached_split_table(rule):
        amaxes = " | ".join(
            " ".join(f"{b:#010x}" for b in bits) or "-"
            for bits in (s.float32_amaxes, s.bfloat16_amaxes)
        )
        shown = amaxes if s.status == "split" else s.reason
        print(f"{s.axis:<17} {s.value[:22]:<22} {s.status:<11} {s.base_calls:>5}  {shown}")
    return 0
