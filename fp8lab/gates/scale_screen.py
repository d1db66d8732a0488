"""The port screen of ``rules infer`` for scale rules: a declaration's mismatching words per call.

:class:`Screen` holds a kernel's recorded outputs for GQ's calls and counts,
with the numpy port (:func:`fp8lab.kernels.scheme.scheme_quant`), how many
words a declaration gets wrong on each call: its scales alone
(:meth:`Screen.scales`), its codes given the kernel's own scales
(:meth:`Screen.codes`), or both as the rule computes them
(:meth:`Screen.both`). Calls whose rows are independent (a scale per row or
block, or a tensor of one row) are stacked, one port call for many, and the
counts given back to their calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fp8lab.gates.gq_case import _malformed
from fp8lab.kernels.scheme import scheme_quant, scheme_scales
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import Granularity, NanCode, ScaleRule

if TYPE_CHECKING:
    from fp8lab.gates.gq import GqCall

__all__ = ["Screen"]

Outputs = tuple[np.ndarray, np.ndarray]


class _Batch:
    """Inputs, the kernel's codes and scales, and the call each row (or the whole) came from."""

    def __init__(self, x: np.ndarray, codes: np.ndarray, scales: np.ndarray, calls: Any) -> None:
        self.x, self.codes, self.scales, self.calls = x, codes, scales, calls


class Screen:
    """A kernel's outputs for ``calls``, ready to be held to declarations.

    Raises:
        KernelFaultError: for an output of the wrong dtype or shape (checked
            against ``form``, any rule of the scheme).
    """

    def __init__(
        self, form: ScaleRule, calls: Sequence[GqCall], outputs: Sequence[Outputs]
    ) -> None:
        self.calls = len(calls)
        # a tensor of one row is scaled as that row: per-tensor calls of one row each stack too
        self.rowwise = form.granularity is not Granularity.TENSOR or all(
            np.shape(c.args[0])[0] == 1 for c in calls
        )
        self.batches = _batches(calls, outputs, self.rowwise)
        self.as_rows = form.granularity is Granularity.TENSOR and self.rowwise
        for b in self.batches:  # the form once, from any rule's port
            want_codes, want_scales = scheme_quant(b.x, self._layout(form))
            error = _malformed((b.codes, b.scales), want_codes, want_scales)
            if error:
                raise KernelFaultError(error)
        elem = get_format(form.element)
        self.is_nan = np.array([elem.is_nan_code(c) for c in range(256)], np.bool_)

    def _layout(self, rule: ScaleRule) -> ScaleRule:
        """``rule`` with a scale per row where one-row tensors were stacked: the same words."""
        return replace(rule, granularity=Granularity.ROW) if self.as_rows else rule

    def _count(self, per_row: np.ndarray, batch: _Batch) -> npt.NDArray[np.int64]:
        if isinstance(batch.calls, int):
            out = np.zeros(self.calls, np.int64)
            out[batch.calls] = int(per_row.sum())
            return out
        return np.bincount(batch.calls, per_row, minlength=self.calls).astype(np.int64)

    def _scale_rows(self, got: np.ndarray, want: np.ndarray, rows: int) -> np.ndarray:
        bad = got.view(np.uint8).reshape(got.size, -1) != want.view(np.uint8).reshape(want.size, -1)
        wrong = bad.any(axis=1)
        if got.dtype.kind == "f":
            wrong &= ~(np.isnan(got.reshape(-1)) & np.isnan(want.reshape(-1)))
        if wrong.size % rows:  # one call's tensor scale: counted whole
            return np.asarray(wrong)
        return np.asarray(wrong.reshape(rows, -1).sum(axis=1))

    def _code_rows(self, got: np.ndarray, want: np.ndarray, rule: ScaleRule) -> np.ndarray:
        bad = got != want
        if rule.nan_code is NanCode.ANY:
            bad &= ~(self.is_nan[got] & self.is_nan[want])
        return np.asarray(bad.reshape(got.shape[0], -1).sum(axis=1))

    def scales(self, rule: ScaleRule) -> npt.NDArray[np.int64]:
        """Per call, the scales ``rule`` gets wrong (a NaN scale of any bits is the same NaN)."""
        total = np.zeros(self.calls, np.int64)
        for b in self.batches:
            want = scheme_scales(b.x, self._layout(rule)).reshape(b.scales.shape)
            total += self._count(self._scale_rows(b.scales, want, b.x.shape[0]), b)
        return total

    def codes(self, rule: ScaleRule) -> npt.NDArray[np.int64]:
        """Per call, the codes ``rule``'s element path gets wrong on the kernel's own scales."""
        total = np.zeros(self.calls, np.int64)
        for b in self.batches:
            try:
                want, _ = scheme_quant(b.x, self._layout(rule), b.scales)
            except ValueError:  # scales of another kind than the rule's
                want = ~b.codes
            total += self._count(self._code_rows(b.codes, want, rule), b)
        return total

    def both(self, rule: ScaleRule) -> npt.NDArray[np.int64]:
        """Per call, the scales and codes ``rule`` gets wrong, as it computes both."""
        total = np.zeros(self.calls, np.int64)
        for b in self.batches:
            codes, scales = scheme_quant(b.x, self._layout(rule))
            total += self._count(self._code_rows(b.codes, codes, rule), b)
            total += self._count(self._scale_rows(b.scales, scales, b.x.shape[0]), b)
        return total


def _batches(calls: Sequence[GqCall], outputs: Sequence[Outputs], stack: bool) -> list[_Batch]:
    """One batch per call; with ``stack`` (rows independent), one per input dtype and width K.

    Stacking the calls' rows changes no expected word and makes one port call
    of many. x keeps its dtype: a rule's ``arithmetic = "input"`` reads it.
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
        return [_Batch(x, c, s, i) for i, (x, c, s) in enumerate(own)]
    groups = sorted({(x.dtype.name, x.shape[1]) for x, _, _ in own})
    out = []
    for g in groups:
        picked = [(i, t) for i, t in enumerate(own) if (t[0].dtype.name, t[0].shape[1]) == g]
        rows = np.concatenate([np.full(t[0].shape[0], i) for i, t in picked])
        x, codes, scales = (np.concatenate([t[k] for _, t in picked]) for k in range(3))
        out.append(_Batch(x, codes, scales, rows))
    return out


def _float_input(x: Any) -> np.ndarray:
    """``x`` as an array: bfloat16 kept, any other dtype as float32."""
    arr = np.asarray(x)
    return arr if arr.dtype.name == "bfloat16" else np.asarray(arr, np.float32)
