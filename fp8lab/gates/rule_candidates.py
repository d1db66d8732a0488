"""What ``fp8lab rules infer`` searches: each scheme's starting rules and the axes it varies.

The search (:mod:`fp8lab.gates.rule_search`) starts from each named rule of
the scheme and moves one group of axes at a time; a group is searched jointly
where the rule ties its axes together (a multiplier scale and its ``apply =
"multiply"``; a zero scale, the arithmetic dtype and the bfloat16 zero scale).
Scale rules are searched in two stages: the axes that decide the scale
(:data:`SCALE_GROUPS`), on the kernel's scales alone, then the axes of the
element path (:data:`ELEMENT_GROUPS`), on its codes given its scales. A number
axis takes None or one of :data:`NUMBERS` (every number a named rule uses and
the usual floors: the float32, bfloat16 and float16 eps and tiny, 1e-12 to
1e-4). Static rules (``--scheme static``) have the element stage only, the
element format among it. NVFP4's declarations are
:mod:`fp8lab.gates.nvfp4_candidates`'s, all 256 of them.
"""

from __future__ import annotations

from dataclasses import fields

from fp8lab.gates.gq_plan import GQ_RULES
from fp8lab.gates.nvfp4_candidates import nvfp4_declaration
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.rule_file import field_kinds
from fp8lab.specs.scale_rules import (
    RULES,
    AmaxNan,
    Apply,
    Arithmetic,
    Clamp,
    E8m0Exponent,
    E8m0Inf,
    E8m0Nan,
    E8m0NanBlock,
    E8m0Zero,
    ElementRounding,
    NanCode,
    Pow2,
    Quotient,
    ScaleRule,
    SignedZero,
    Storage,
)
from fp8lab.specs.static_rules import STATIC_RULES

__all__ = [
    "ELEMENT_FIELDS",
    "ELEMENT_GROUPS",
    "SCALE_FIELDS",
    "ENUM_AXES",
    "HELD_FIXED",
    "NUMBERS",
    "SCALE_GROUPS",
    "STATIC_ELEMENTS",
    "STATIC_SCHEME",
    "AnyRule",
    "declaration",
    "differing_axes",
    "named_rules",
    "scheme_groups",
]

AnyRule = ScaleRule | Nvfp4ScaleRule
STATIC_SCHEME = "static"  # rules infer --scheme static: G1's per-tensor static rules
STATIC_ELEMENTS = ("e4m3fn", "e5m2")  # the formats a static kernel's bytes are tried in

_NAMED_NUMBERS = {
    getattr(r, k)
    for r in RULES.values()
    for k, kind in field_kinds(ScaleRule).items()
    if kind.base is float and kind.optional and getattr(r, k) is not None
}
# None or one of these: every number a named rule uses, and the usual floors
NUMBERS: tuple[float, ...] = tuple(
    sorted(
        _NAMED_NUMBERS
        | {2.0**-23, 2.0**-7, 2.0**-10, 2.0**-126, 2.0**-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-4}
    )
)
_MAYBE = (None, *NUMBERS)

Group = dict[str, tuple[object, ...]]
# the axes that decide the scale, searched on the kernel's scales (a group's axes jointly)
SCALE_GROUPS: tuple[Group, ...] = (
    {"amax_nan": tuple(AmaxNan), "amax_lanes": (None, 2, 4, 8, 16, 32, 64)},
    {"amax_floor": _MAYBE},
    {"scale_from": tuple(Apply)},  # multiply is refused: a multiplier is storage
    {"min_scale": _MAYBE},
    {"pow2": tuple(Pow2)},
    {"quotient": tuple(Quotient)},
    {"storage": tuple(Storage), "apply": tuple(Apply)},
    {"zero_scale": _MAYBE, "arithmetic": tuple(Arithmetic), "input_zero_scale": _MAYBE},
    {"e8m0_inf": tuple(E8m0Inf)},
    {"e8m0_nan": tuple(E8m0Nan)},
    {"e8m0_exponent": tuple(E8m0Exponent)},
)
# the axes of the element path, searched on the codes given the scales
ELEMENT_GROUPS: tuple[Group, ...] = (
    {"apply": tuple(Apply)},
    {"arithmetic": tuple(Arithmetic)},  # input-quotient rounds the quotient, not the scale
    {"clamp": tuple(Clamp)},
    {"element_rounding": tuple(ElementRounding)},
    {"saturate": (True, False)},
    {"signed_zero": tuple(SignedZero)},
    {"e8m0_zero": tuple(E8m0Zero)},
    {"e8m0_nan_block": tuple(E8m0NanBlock)},
    {"nan_code": tuple(NanCode)},
)
# a static rule's: its format, then its element path (the arithmetic dtype is in it)
STATIC_GROUPS: tuple[Group, ...] = (
    {"element": STATIC_ELEMENTS},
    {"apply": (Apply.DIVIDE, Apply.RECIPROCAL)},
    {"arithmetic": tuple(Arithmetic)},
    *ELEMENT_GROUPS[2:6],
    ELEMENT_GROUPS[8],
)
# what each stage's screen reads: the scale from the amax; the codes from x and given scales
SCALE_FIELDS = (
    "element",
    "granularity",
    "block",
    "amax_nan",
    "amax_init",
    "amax_floor",
    "scale_ub",
    "scale_from",
    "min_scale",
    "pow2",
    "quotient",
    "storage",
    "zero_scale",
    "arithmetic",
    "input_zero_scale",
    "e8m0_inf",
    "e8m0_nan",
    "e8m0_exponent",
    "amax_lanes",
)
ELEMENT_FIELDS = (
    "element",
    "granularity",
    "block",
    "pow2",
    "storage",
    "apply",
    "arithmetic",
    "clamp",
    "element_rounding",
    "saturate",
    "signed_zero",
    "nan_code",
    "e8m0_zero",
    "e8m0_nan_block",
)
# every axis some group varies, with the values it takes (tests/specs/test_rule_axes_read.py)
ENUM_AXES: dict[str, tuple[object, ...]] = {
    axis: values for group in SCALE_GROUPS + ELEMENT_GROUPS for axis, values in group.items()
}
# the fields no candidate varies, each with the reason: every declaration keeps the named
# rule's value (a new axis goes in a group, or here with its reason)
HELD_FIXED: dict[str, str] = {
    "element": "the scheme's element format (static: searched, e4m3fn or e5m2)",
    "scale_format": "the scheme's layout",
    "granularity": "the scheme's layout",
    "block": "the scheme's layout",
    "amax_init": "a number: 0 in every named rule (a reduction's start value)",
    "scale_ub": "a bound above every amax of the population cannot be seen: none",
    "scale_source": "the scheme's: computed from the amax (static: given)",
}
_UNNAMED = ("name", "source", "element_source")  # what a declaration is not


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
    """The named rules of ``scheme`` the search starts from, by name, in the rules' order.

    Raises:
        ValueError: for a scheme without named rules.
    """
    if scheme == STATIC_SCHEME:
        found: dict[str, AnyRule] = {
            n: r for n, r in STATIC_RULES.items() if r.granularity.value == "tensor"
        }
    else:
        found = {
            n: RULES.get(n) or NVFP4_RULES[n]
            for n in GQ_RULES.get(scheme, ())
            if n in RULES or scheme == "nvfp4"
        }
    if not found:
        schemes = [s for s in GQ_RULES if s != "nvfp4" or NVFP4_RULES] + [STATIC_SCHEME]
        raise ValueError(f"rules infer searches the rules of {', '.join(schemes)}")
    return found


def scheme_groups(scheme: str) -> tuple[tuple[Group, ...], tuple[Group, ...]]:
    """The (scale, element) groups searched for ``scheme``; a static scheme has no scale stage."""
    if scheme == STATIC_SCHEME:
        return (), STATIC_GROUPS
    return SCALE_GROUPS, ELEMENT_GROUPS
