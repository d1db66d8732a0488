"""GQ's schemes, the rules each accepts, and each scheme's plan: element, calls, reference."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.gates.gq_memo import remembered_expectation
from fp8lab.populations.split_cache import cached_split_table
from fp8lab.populations.split_record import AxisSplit
from fp8lab.refs import reference_nvfp4_quant, reference_scheme_quant
from fp8lab.specs.format_dtypes import INPUT_DTYPES
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, Granularity, NanCode, ScaleRule, get_rule
from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS

__all__ = ["GQ_INPUT_DTYPES", "GQ_RULES", "GQ_SCHEMES"]

GQ_INPUT_DTYPES = INPUT_DTYPES
GQ_SCHEMES = SCHEME_LAYOUTS  # scheme -> (granularity, block, scale format)
# scheme -> the names of the rules that describe it (what --rule accepts for --scheme)
GQ_RULES: dict[str, tuple[str, ...]] = {
    scheme: tuple(
        r.name for r in RULES.values() if (r.granularity, r.block, r.scale_format) == shape
    )
    for scheme, shape in GQ_SCHEMES.items()
}
# NVFP4: the rules whose element path is modelled (the others model the block byte only)
GQ_RULES["nvfp4"] = tuple(n for n, r in NVFP4_RULES.items() if r.element_source is not None)


@dataclass(frozen=True)
class _Plan:
    """What one scheme's cases need: the element format and, per input, its calls.

    ``per_tensor``: each population row is a tensor of its own, so every
    constructed amax is a tensor's amax. ``calls(x)`` lists (name suffix,
    kernel arguments); ``want(args)`` is the rule's reference for those arguments.
    ``same_nan``: every NaN code of the element format is the same NaN (the
    rule's ``nan_code = "any"``), so NaN codes that differ are no mismatch.
    ``rule``: the scale rule, whose split table (:meth:`splits`,
    :mod:`fp8lab.populations.rule_splits`) gives the ``rule-split`` calls.
    """

    element: str
    per_tensor: bool
    calls: Callable[[np.ndarray], list[tuple[str, tuple[Any, ...]]]]
    want: Callable[[tuple[Any, ...]], tuple[np.ndarray, np.ndarray]]
    same_nan: bool = False
    rule: ScaleRule | None = None

    def splits(self) -> tuple[AxisSplit, ...]:
        """The rule's split table (none for NVFP4), computed and cached on first use."""
        return cached_split_table(self.rule) if self.rule is not None else ()


def _global_amaxes(x: np.ndarray) -> list[tuple[str, npt.NDArray[np.float32]]]:
    """The global scales GQ hands an nvfp4 kernel, each a float32 [1].

    The tensor's amax (NaN skipped; what TE's amax kernel hands the cast),
    and float32(1.5 x it), so a kernel that ignores its ``global_scale`` fails.
    """
    flat = np.abs(x.astype(np.float32)).reshape(-1)
    own = np.fmax.reduce(flat, initial=np.float32(0))
    with np.errstate(over="ignore"):
        wider = own * np.float32(1.5)
    return [("", np.array([own], np.float32)), ("~g1.5", np.array([wider], np.float32))]


def _plan(scheme: str, rule: str | ScaleRule | Nvfp4ScaleRule) -> tuple[_Plan, str]:
    """The plan for ``scheme`` under ``rule``, and the rule's name.

    Raises:
        ValueError: for an unknown scheme or rule, or a rule of another scheme.
    """
    if scheme not in GQ_SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose from {', '.join(GQ_SCHEMES)}")
    if scheme == "nvfp4":
        nv = NVFP4_RULES.get(rule) if isinstance(rule, str) else rule
        if not isinstance(nv, Nvfp4ScaleRule) or nv.element_source is None:
            raise ValueError(f"rule {_name(rule)!r} is not an nvfp4 rule GQ models")
        if nv.name in NVFP4_RULES and nv != NVFP4_RULES[nv.name]:  # the record names the rule
            raise ValueError(
                f"rule {nv.name!r} differs from the published rule of that name; "
                "give a custom rule a name of its own"
            )
        plan = _Plan(
            "e2m1fn",
            True,
            lambda x: [(tag, (x, g)) for tag, g in _global_amaxes(x)],
            lambda a: remembered_expectation(
                nv, a, lambda: reference_nvfp4_quant(a[0].astype(np.float32), float(a[1][0]), nv)
            ),
        )
        return plan, nv.name
    if isinstance(rule, Nvfp4ScaleRule):
        raise ValueError(f"rule {rule.name!r} does not describe the {scheme} scheme")
    spec = get_rule(rule)
    if spec.name in RULES and spec != RULES[spec.name]:
        raise ValueError(
            f"rule {spec.name!r} differs from the published rule of that name; "
            "give a custom rule a name of its own"
        )
    granularity, block, scale_format = GQ_SCHEMES[scheme]
    if (spec.granularity, spec.block, spec.scale_format) != (granularity, block, scale_format):
        raise ValueError(f"rule {spec.name!r} does not describe the {scheme} scheme")
    plan = _Plan(
        spec.element,
        spec.granularity is Granularity.TENSOR,
        lambda x: [("", (x,))],
        # x keeps its dtype: a rule's arithmetic = "input" reads it
        lambda a: remembered_expectation(spec, a, lambda: reference_scheme_quant(a[0], spec)),
        spec.nan_code is NanCode.ANY,
        spec,
    )
    return plan, spec.name


def _name(rule: object) -> str:
    return str(getattr(rule, "name", rule))


def _check_dtypes(input_dtypes: Sequence[str]) -> None:
    unknown = set(input_dtypes) - set(INPUT_DTYPES)
    if unknown:
        raise ValueError(f"unknown input dtypes {sorted(unknown)}; use {GQ_INPUT_DTYPES}")
