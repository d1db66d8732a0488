"""The NVFP4 declarations ``fp8lab rules infer`` tries: each modelled rule, its choices varied.

A candidate starts from one named NVFP4 rule whose element path is modelled
(:data:`~fp8lab.gates.gq_plan.GQ_RULES` ``["nvfp4"]``; its block and element
source) and takes every combination of the choice fields of
:class:`~fp8lab.specs.nvfp4_rules.Nvfp4ScaleRule` (:data:`NVFP4_AXES`). A
combination the rule refuses is skipped, and a declaration reached from two
named rules is tried once. Each candidate is screened by the numpy port
(:func:`fp8lab.kernels.scheme.nvfp4_quant`), one call per kernel call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING

import numpy as np

from fp8lab.gates.gq_case import _malformed
from fp8lab.gates.gq_plan import GQ_RULES
from fp8lab.gates.rule_variation import varied_declarations
from fp8lab.kernels.scheme import nvfp4_quant
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.nvfp4_rules import (
    E4M3_TINY,
    NVFP4_RULES,
    Nvfp4Inverse,
    Nvfp4NanCode,
    Nvfp4Order,
    Nvfp4ScaleRule,
    Nvfp4TensorScale,
)
from fp8lab.specs.rule_axes import AmaxNan

if TYPE_CHECKING:
    from fp8lab.gates.gq import GqCall

__all__ = ["NVFP4_AXES", "NVFP4_HELD_FIXED", "nvfp4_candidates", "nvfp4_screen"]

# the fields a candidate varies (block and element path are the named rule's), in report order
NVFP4_AXES: dict[str, tuple[object, ...]] = {
    "order": tuple(Nvfp4Order),
    "clamp_block": (True, False),
    "inverse": tuple(Nvfp4Inverse),
    "tensor_scale": tuple(Nvfp4TensorScale),
    "block_bounds": (None, (E4M3_TINY, 448.0)),  # TE: the SATFINITE cast alone; torchao's clamp
    "amax_nan": tuple(AmaxNan),
    "nan_code": tuple(Nvfp4NanCode),
}
# the fields no candidate varies, with the reason (tests/specs/test_rule_axes_read.py)
NVFP4_HELD_FIXED: dict[str, str] = {"block": "the scheme's layout (16)"}
_UNNAMED = ("name", "source", "element_source")  # what a declaration is not


def nvfp4_declaration(rule: Nvfp4ScaleRule) -> tuple[object, ...]:
    """Every field of ``rule`` the reference reads: all but name, source and element source."""
    return tuple(getattr(rule, f.name) for f in fields(rule) if f.name not in _UNNAMED)


def nvfp4_candidates() -> list[tuple[Nvfp4ScaleRule, str]]:
    """Every NVFP4 declaration tried and the named rule it came from, each own declaration first."""
    return varied_declarations(
        NVFP4_RULES, GQ_RULES["nvfp4"], NVFP4_AXES, nvfp4_declaration, "inferred-nvfp4"
    )


def nvfp4_screen(
    candidates: Sequence[object],
    calls: Sequence[GqCall],
    outputs: Sequence[tuple[np.ndarray, np.ndarray]],
) -> list[int]:
    """Each candidate's mismatching words (codes and scale bytes) under the port.

    Raises:
        KernelFaultError: for an output of the wrong dtype or shape.
        TypeError: for a candidate that is not an NVFP4 rule.
    """
    rules = [r for r in candidates if isinstance(r, Nvfp4ScaleRule)]
    if len(rules) != len(candidates):
        raise TypeError("nvfp4_screen screens NVFP4 rules only")
    if not rules:
        return []
    first = rules[0]
    for call, got in zip(calls, outputs, strict=True):  # the form once, from any candidate
        error = _malformed(got, *nvfp4_quant(call.args[0], call.args[1], first))
        if error:
            raise KernelFaultError(error)
    batches = _batches(calls, outputs)
    found = []
    for rule in rules:
        bad = 0
        for x, g, codes, scales in batches:
            want_codes, want_scales = nvfp4_quant(x, g, rule)
            bad += int((codes != want_codes).sum()) + int((scales != want_scales).sum())
        found.append(bad)
    return found


def _batches(
    calls: Sequence[GqCall], outputs: Sequence[tuple[np.ndarray, np.ndarray]]
) -> list[tuple[np.ndarray, ...]]:
    """(x, global amax per row, codes, scales), the calls' rows stacked per width K.

    Each row of a call is scaled by that call's global amax alone, so a stack
    of rows, each with its own global amax, changes no expected word and makes
    one port call of many. x as float32: the port reads it so.
    """
    own = [
        (
            np.asarray(call.args[0], np.float32),
            np.repeat(np.asarray(call.args[1], np.float32).reshape(-1)[:1], call.args[0].shape[0]),
            codes,
            scales,
        )
        for call, (codes, scales) in zip(calls, outputs, strict=True)
    ]
    widths = sorted({t[0].shape[1] for t in own})
    return [
        tuple(np.concatenate([t[i] for t in own if t[0].shape[1] == k]) for i in range(4))
        for k in widths
    ]
