"""The declarations ``fp8lab rules infer`` tries: each named rule of a scheme, its enum axes varied.

A candidate starts from one named rule of the scheme's layout (its numbers:
amax floor, bound, minimum scale) and takes every combination of the enum
axes; :class:`~fp8lab.specs.scale_rules.ScaleRule` refuses the combinations
that are no rule (an e8m0 scale with a float32 power-of-two step, a multiply
without a multiplier scale), and a declaration reached from two named rules
is tried once. NVFP4's declarations are :mod:`fp8lab.gates.nvfp4_candidates`'s.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields

from fp8lab.gates.gq_plan import GQ_RULES
from fp8lab.gates.nvfp4_candidates import nvfp4_candidates, nvfp4_declaration
from fp8lab.gates.rule_variation import varied_declarations
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import (
    RULES,
    AmaxNan,
    Apply,
    Clamp,
    NanCode,
    Pow2,
    Quotient,
    ScaleRule,
    SignedZero,
    Storage,
)

__all__ = [
    "ENUM_AXES",
    "AnyRule",
    "Candidate",
    "declaration",
    "differing_axes",
    "named_rules",
    "rule_candidates",
]

AnyRule = ScaleRule | Nvfp4ScaleRule

# the axes a candidate varies (granularity is the scheme's), in the order they are reported
ENUM_AXES: dict[str, type[enum.Enum]] = {
    "amax_nan": AmaxNan,
    "scale_from": Apply,
    "pow2": Pow2,
    "apply": Apply,
    "clamp": Clamp,
    "quotient": Quotient,
    "storage": Storage,
    "nan_code": NanCode,
    "signed_zero": SignedZero,
}
_UNNAMED = ("name", "source", "element_source")  # what a declaration is not


@dataclass(frozen=True)
class Candidate:
    """One declaration tried (named ``inferred-SCHEME``) and the named rule it came from."""

    rule: AnyRule
    base: str


def declaration(rule: AnyRule) -> tuple[object, ...]:
    """Every field of ``rule`` but its name and source: what the reference reads."""
    if isinstance(rule, Nvfp4ScaleRule):
        return nvfp4_declaration(rule)
    return tuple(getattr(rule, f.name) for f in fields(ScaleRule) if f.name not in _UNNAMED)


def differing_axes(a: AnyRule, b: AnyRule) -> tuple[str, ...]:
    """The fields (name, source and element source aside) whose values differ."""
    return tuple(
        f.name
        for f in fields(a)
        if f.name not in _UNNAMED and getattr(a, f.name) != getattr(b, f.name)
    )


def named_rules(scheme: str) -> dict[str, AnyRule]:
    """The named rules of ``scheme`` the candidates start from, by name, in the rules' order."""
    return {
        n: RULES.get(n) or NVFP4_RULES[n]
        for n in GQ_RULES.get(scheme, ())
        if n in RULES or scheme == "nvfp4"
    }


def rule_candidates(scheme: str) -> list[Candidate]:
    """Every declaration tried for ``scheme``, each named rule's own declaration first.

    Raises:
        ValueError: for a scheme without named rules.
    """
    if scheme == "nvfp4":
        return [Candidate(rule, base) for rule, base in nvfp4_candidates()]
    names = [n for n in GQ_RULES.get(scheme, ()) if n in RULES]
    if not names:
        raise ValueError(f"rules infer varies the scale rules of {', '.join(_schemes())}")
    found = varied_declarations(RULES, names, ENUM_AXES, declaration, f"inferred-{scheme}")
    return [Candidate(rule, base) for rule, base in found]


def _schemes() -> list[str]:
    return [s for s, names in GQ_RULES.items() if named_rules(s)]
