"""The port screen of ``rules infer`` for scale rules: each candidate's mismatching words.

Each candidate is evaluated by the numpy port
(:func:`fp8lab.kernels.scheme.scheme_quant`), once per declaration with its
NaN-code choice aside: the calls' rows stacked where rows are independent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from fp8lab.gates.gq_case import _malformed
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import Granularity, NanCode, ScaleRule

if TYPE_CHECKING:
    from fp8lab.gates.gq import GqCall
    from fp8lab.gates.rule_candidates import Candidate

__all__ = ["scale_screen"]

Outputs = tuple[np.ndarray, np.ndarray]
Batch = tuple[np.ndarray, np.ndarray, np.ndarray]  # x (float32 or bfloat16), codes, scales


def scale_screen(
    candidates: Sequence[Candidate], calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> list[int]:
    """Each candidate's mismatching words under the port (NaN codes as its ``nan_code`` says).

    Raises:
        KernelFaultError: for an output of the wrong dtype or shape.
    """
    if not candidates:
        return []
    rule = candidates[0].rule
    assert isinstance(rule, ScaleRule)
    # a tensor of one row is scaled as that row: per-tensor calls of one row each stack too
    rowwise = rule.granularity is not Granularity.TENSOR or all(
        np.shape(c.args[0])[0] == 1 for c in calls
    )
    batches = _batches(calls, outputs, rowwise)
    as_rows = rowwise and rule.granularity is Granularity.TENSOR and len(batches) < len(calls)
    for x, codes, scales in batches:  # the form once, from any candidate's port
        want_codes, want_scales = scheme_quant(x, _rows(rule) if as_rows else rule)
        error = _malformed((codes, scales), want_codes, want_scales)
        if error:
            raise KernelFaultError(error)
    elem = get_format(rule.element)
    is_nan = np.array([elem.is_nan_code(c) for c in range(256)], np.bool_)
    counts: dict[ScaleRule, tuple[int, int]] = {}
    found = []
    for c in candidates:
        assert isinstance(c.rule, ScaleRule)
        key = replace(c.rule, nan_code=NanCode.CANONICAL)
        if key not in counts:
            counts[key] = _port_mismatches(_rows(key) if as_rows else key, batches, is_nan)
        strict, loose = counts[key]
        found.append(loose if c.rule.nan_code is NanCode.ANY else strict)
    return found


def _rows(rule: ScaleRule) -> ScaleRule:
    """``rule`` with a scale per row: on a tensor of one row, the same words."""
    return replace(rule, granularity=Granularity.ROW)


def _batches(calls: Sequence[GqCall], outputs: Sequence[Outputs], stack: bool) -> list[Batch]:
    """(x, codes, scales) per call; with ``stack`` (rows independent), per input dtype and width K.

    With a scale per row or block (or per tensor of one row, scaled as that
    row), stacking the calls' rows changes no expected word and makes one port
    call of many. x keeps its dtype: a rule's ``arithmetic = "input"`` reads it.
    """
    own = [
        (_float_input(call.args[0]), codes, scales)
        for call, (codes, scales) in zip(calls, outputs, strict=True)
    ]
    kinds = {(c.dtype, s.dtype) for _, c, s in own}
    if (
        not stack
        or len(kinds) != 1
        or any(c.shape != x.shape or s.ndim == 0 or s.shape[0] != x.shape[0] for x, c, s in own)
    ):
        return own
    groups = sorted({(x.dtype.name, x.shape[1]) for x, _, _ in own})
    return [
        tuple(  # type: ignore[misc]
            np.concatenate([t[i] for t in own if (t[0].dtype.name, t[0].shape[1]) == g])
            for i in range(3)
        )
        for g in groups
    ]


def _float_input(x: Any) -> np.ndarray:
    """``x`` as an array: bfloat16 kept, any other dtype as float32."""
    arr = np.asarray(x)
    return arr if arr.dtype.name == "bfloat16" else np.asarray(arr, np.float32)


def _port_mismatches(
    rule: ScaleRule,
    batches: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    is_nan: np.ndarray,
) -> tuple[int, int]:
    """Mismatching words of the port of ``rule``: NaN codes compared, and NaNs all one."""
    strict = loose = 0
    for x, codes, scales in batches:
        want_codes, want_scales = scheme_quant(x, rule)
        bad = codes != want_codes
        both = is_nan[codes] & is_nan[want_codes]
        rows = scales.view(np.uint8).reshape(scales.size, -1)
        scale_bad = (rows != want_scales.view(np.uint8).reshape(want_scales.size, -1)).any(axis=1)
        nan_scales = np.zeros_like(scale_bad)
        if scales.dtype.kind == "f":
            nan_scales = np.isnan(scales.reshape(-1)) & np.isnan(want_scales.reshape(-1))
        strict += int(bad.sum()) + int(scale_bad.sum())
        loose += int((bad & ~both).sum()) + int((scale_bad & ~nan_scales).sum())
    return strict, loose
