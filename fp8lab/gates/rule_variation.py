"""Named rules with their choice fields varied: the declarations ``rules infer`` tries.

Shared by the scale-rule and the NVFP4 candidates
(:mod:`fp8lab.gates.rule_candidates`, :mod:`fp8lab.gates.nvfp4_candidates`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

__all__ = ["varied_declarations"]

R = TypeVar("R")


def varied_declarations(
    rules: Mapping[str, R],
    names: Sequence[str],
    axes: Mapping[str, Iterable[object]],
    declaration: Callable[[R], tuple[object, ...]],
    name: str,
) -> list[tuple[R, str]]:
    """Each named rule's own declaration, then every combination of ``axes`` on each, renamed.

    A combination the rule's constructor refuses (``ValueError``) is no rule and
    is skipped; a declaration reached twice is kept once, with the named rule
    (of ``names``) it was first reached from.
    """
    found: dict[tuple[object, ...], tuple[R, str]] = {}
    for base in names:
        own = replace(rules[base], name=name, source=f"{base}, as declared")  # type: ignore[type-var]
        found.setdefault(declaration(own), (own, base))
    for base in names:
        for combo in itertools.product(*axes.values()):
            values: dict[str, Any] = dict(zip(axes, combo, strict=True))
            try:
                rule = replace(rules[base], name=name, source=f"{base}, axes varied", **values)  # type: ignore[type-var]
            except ValueError:  # no rule: the rule refuses the combination
                continue
            found.setdefault(declaration(rule), (rule, base))
    return list(found.values())
