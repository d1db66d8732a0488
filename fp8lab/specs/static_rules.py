"""Static quantization rules: the scale-given case of :class:`~fp8lab.specs.scale_rules.ScaleRule`.

A static rule has ``scale_source = "given"``: G1 hands the kernel ``x`` and
its scales (one float32 per tensor, per row or per block, as the rule's
granularity says), and the rule chooses only the element path: ``apply``
(divide, reciprocal or multiply), ``arithmetic`` (float32, or the input's
dtype), ``element_rounding``, ``saturate``, ``clamp``, ``signed_zero`` and
``nan_code``. The rules are data, ``fp8lab/specs/rules/static_rules.toml``,
in the same rule-file form as the dynamic ones; the first is G1's default.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from types import MappingProxyType

from fp8lab.specs.rule_axes import (
    Apply,
    Arithmetic,
    Clamp,
    ElementRounding,
    NanCode,
    ScaleSource,
    SignedZero,
)
from fp8lab.specs.scale_rules import RULES, ScaleRule, parse_rules

__all__ = [
    "DEFAULT_STATIC_RULE",
    "STATIC_AXES",
    "STATIC_RULES",
    "get_static_rule",
    "static_neighbours",
]

# the axes a static rule chooses, each with every value it may take (a multiplier scale,
# apply = "multiply", goes with storage = "multiplier": a rule of its own, not a neighbour)
STATIC_AXES: dict[str, tuple[object, ...]] = {
    "apply": (Apply.DIVIDE, Apply.RECIPROCAL),
    "arithmetic": tuple(Arithmetic),
    "element_rounding": tuple(ElementRounding),
    "saturate": (True, False),
    "clamp": tuple(Clamp),
    "signed_zero": tuple(SignedZero),
    "nan_code": tuple(NanCode),
}

_DECLARED = parse_rules(
    resources.files("fp8lab.specs").joinpath("rules/static_rules.toml").read_text("utf-8"),
    "fp8lab/specs/rules/static_rules.toml",
)
if any(r.scale_source is not ScaleSource.GIVEN or r.name in RULES for r in _DECLARED):
    raise ValueError("static_rules.toml: every rule has a given scale and a name of its own")

STATIC_RULES: MappingProxyType[str, ScaleRule] = MappingProxyType({r.name: r for r in _DECLARED})
DEFAULT_STATIC_RULE = _DECLARED[0].name  # the seed's x * float32(1/s): G1 without --rule


def get_static_rule(rule: str | ScaleRule) -> ScaleRule:
    """A static rule by name, or a :class:`ScaleRule` with a given scale passed through.

    Raises:
        ValueError: for an unknown name, or a rule whose scale is not given.
    """
    if isinstance(rule, ScaleRule):
        if rule.scale_source is not ScaleSource.GIVEN:
            raise ValueError(f"{rule.name}: a dynamic rule (scale_source = amax); GQ checks it")
        return rule
    try:
        return STATIC_RULES[rule]
    except (KeyError, TypeError):
        known = ", ".join(STATIC_RULES)
        raise ValueError(f"unknown static rule {rule!r}; known: {known}") from None


def static_neighbours(rule: ScaleRule) -> list[tuple[str, object, ScaleRule]]:
    """``(axis, value, rule[axis := value])`` for every other value of every static axis.

    A value the rule refuses (non-saturating on a format without inf or NaN)
    is left out. Neighbours are named ``NAME[axis=value]``.
    """
    found = []
    for axis, values in STATIC_AXES.items():
        for value in values:
            if value == getattr(rule, axis):
                continue
            text = getattr(value, "value", value)
            try:
                other = dataclasses.replace(
                    rule,
                    name=f"{rule.name}[{axis}={text}]",
                    **{axis: value},  # type: ignore[arg-type]
                )
            except ValueError:
                continue
            found.append((axis, value, other))
    return found
