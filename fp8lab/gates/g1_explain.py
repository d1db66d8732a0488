"""Which neighbouring static rule explains a G1 FAIL: the outputs re-checked, the kernel untrusted.

When a kernel FAILs G1 under rule R, its recorded outputs are held, case by
case, to the reference of each rule near R: every one-axis neighbour
(:func:`~fp8lab.specs.static_rules.static_neighbours`), R with another
element format, and every built-in static rule of R's layout. A candidate
explains the FAIL when it reproduces every word of every case (NaN codes as
its ``nan_code`` says). The answer names what the kernel does ("your kernel
divides (x / s)") and the rule to state: a built-in that explains it (``--rule
NAME``) or R with the changed keys, as a rule file. Nothing the kernel
declares is read.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fp8lab.gates.compare import nan_code_mask
from fp8lab.specs.formats import get_format
from fp8lab.specs.nan import NanPolicy
from fp8lab.specs.scale_rules import NanCode, ScaleRule
from fp8lab.specs.static_rules import STATIC_RULES, static_neighbours

if TYPE_CHECKING:
    from fp8lab.gates.g1_cases import G1Case

__all__ = ["ELEMENTS", "explain", "what_it_does"]

ELEMENTS = ("e4m3fn", "e5m2")  # the formats a static kernel's bytes are read in
_UNNAMED = ("name", "source")
Expected = Callable[[np.ndarray, object, ScaleRule, NanPolicy], tuple[np.ndarray, np.ndarray]]


def what_it_does(axis: str, value: object) -> str:
    """What a kernel does whose rule has ``axis = value``, in words."""
    text = getattr(value, "value", value)
    phrases = {
        ("apply", "divide"): "divides (x / s)",
        ("apply", "reciprocal"): "multiplies by float32(1/s)",
        ("apply", "multiply"): "multiplies by s",
        ("arithmetic", "input"): "computes in bfloat16 on bfloat16 input",
        ("arithmetic", "float32"): "computes in float32",
        ("element_rounding", "ties-away"): "rounds ties away from zero",
        ("element_rounding", "rne"): "rounds ties to even",
        ("saturate", False): "does not saturate",
        ("saturate", True): "saturates",
        ("signed_zero", "plus-zero"): "turns -0 into +0",
        ("signed_zero", "keep"): "keeps -0",
        ("nan_code", "any"): "makes NaN codes of either sign",
        ("nan_code", "canonical"): "makes the positive NaN code",
    }
    if axis == "clamp":
        return f"clamps {text} before the cast" if text != "none" else "does not clamp"
    if axis == "element":
        return f"writes {text} codes"
    return phrases.get((axis, text), f"has {axis} = {text}")


def _differing(a: ScaleRule, b: ScaleRule) -> list[str]:
    return [
        f.name
        for f in dataclasses.fields(a)
        if f.name not in _UNNAMED and getattr(a, f.name) != getattr(b, f.name)
    ]


def _candidates(rule: ScaleRule) -> list[ScaleRule]:
    """The rules tried, nearest first: one axis changed, another format, the built-ins."""
    found = [other for _, _, other in static_neighbours(rule)]
    for element in ELEMENTS:
        if element != rule.element:
            with contextlib.suppress(ValueError):  # a format the rule's other keys refuse
                found.append(
                    dataclasses.replace(
                        rule, name=f"{rule.name}[element={element}]", element=element
                    )
                )
    layout = (rule.granularity, rule.block)
    found += [r for r in STATIC_RULES.values() if (r.granularity, r.block) == layout]
    return [r for r in found if _differing(rule, r)]


def _reproduces(
    cand: ScaleRule,
    outputs: Sequence[tuple[G1Case, np.ndarray, np.ndarray]],
    policy: NanPolicy,
    expected: Expected,
) -> bool:
    fmt = get_format(cand.element)
    for case, x, got in outputs:
        try:
            want, _ = expected(x, case.scales, cand, policy)
        except ValueError:  # a NaN policy the format has no code for
            return False
        differ = got != want
        if cand.nan_code is NanCode.ANY:
            differ &= ~(nan_code_mask(got, fmt) & nan_code_mask(want, fmt))
        if differ.any():
            return False
    return bool(outputs)


def explain(
    rule: ScaleRule,
    outputs: Sequence[tuple[G1Case, np.ndarray, np.ndarray]],
    policy: NanPolicy,
    expected: Expected,
) -> dict[str, Any] | None:
    """The nearest rule that reproduces every recorded output, or None.

    Returns:
        ``{"rule", "axes", "says"}``: the built-in rule's name (None when only
        ``rule`` with its axes changed explains it), the changed axes and
        their values, and the sentence G1's reason carries.
    """
    explaining = [c for c in _candidates(rule) if _reproduces(c, outputs, policy, expected)]
    if not explaining:
        return None
    best = min(explaining, key=lambda c: len(_differing(rule, c)))
    axes = {a: _text(getattr(best, a)) for a in _differing(rule, best)}
    doing = " and ".join(what_it_does(a, getattr(best, a)) for a in axes)
    builtin = next(
        (
            c.name
            for c in explaining
            if c.name in STATIC_RULES and STATIC_RULES[c.name] == c and not _differing(best, c)
        ),
        None,
    ) or next((c.name for c in explaining if STATIC_RULES.get(c.name) == c), None)
    if builtin is not None:
        target = f"--rule {builtin}"
    else:
        keys = ", ".join(f"{a} = {_toml(v)}" for a, v in axes.items())
        target = f"{rule.name} with {keys} (a rule file: fp8lab rules show {rule.name})"
    says = f"every mismatch is explained by a neighbouring rule: your kernel {doing}: {target}"
    return {"rule": builtin, "axes": axes, "says": says}


def _text(value: object) -> Any:
    return getattr(value, "value", value)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)
