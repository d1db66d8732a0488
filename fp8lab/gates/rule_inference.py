"""Which scale rule a black-box GQ kernel follows: every candidate declaration against its outputs.

The kernel is called once per GQ call of the scheme (:func:`record_outputs`);
:func:`infer_rule` then holds those outputs against every candidate of
:func:`~fp8lab.gates.rule_candidates.rule_candidates`. Each candidate is
screened with the numpy port (:func:`fp8lab.kernels.scheme.scheme_quant`,
one evaluation per declaration, NaN-code choice aside); the chosen candidate
(or, when none reproduces every call, the nearest) is then re-checked by GQ
itself (:func:`fp8lab.gates.gq.run_gq`), against the exact reference, on the
recorded outputs. A reproduction is claimed only when that check passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fp8lab.gates.gq import GqCall, run_gq
from fp8lab.gates.gq_case import _malformed
from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.gates.rule_candidates import Candidate, differing_axes, rule_candidates
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import RULES, Granularity, NanCode, ScaleRule

__all__ = ["Inference", "infer_rule", "record_outputs"]

Outputs = tuple[np.ndarray, np.ndarray]
Batch = tuple[np.ndarray, np.ndarray, np.ndarray]  # x (float32 or bfloat16), codes, scales


@dataclass(frozen=True)
class Inference:
    """What ``rules infer`` found; ``status`` is ``reproduced`` or ``not-reproduced``.

    ``matching`` are the candidates whose port reproduces every call;
    ``chosen`` the one reported (closest to a named rule), or with no match
    the nearest (fewest mismatching words); ``check`` is GQ's record of it on
    the recorded outputs. ``ambiguous_axes`` are the fields the matching
    candidates disagree on: the population cannot tell those values apart.
    """

    scheme: str
    kernel: str
    status: str
    calls_examined: int
    candidates_examined: int
    matching: tuple[ScaleRule, ...]
    chosen: ScaleRule | None
    nearest_named: str
    differing: dict[str, tuple[str, str]]
    ambiguous_axes: tuple[str, ...]
    check: GateResult | None
    screen_mismatches: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record."""
        check = self.check
        return {
            "scheme": self.scheme,
            "kernel": self.kernel,
            "status": self.status,
            "calls_examined": self.calls_examined,
            "candidates_examined": self.candidates_examined,
            "matching_candidates": len(self.matching),
            "ambiguous_axes": {
                k: sorted({str(_text(getattr(r, k))) for r in self.matching})
                for k in self.ambiguous_axes
            },
            "chosen_rule": None if self.chosen is None else _fields(self.chosen),
            "nearest_named_rule": self.nearest_named,
            "differing_axes": {k: list(v) for k, v in self.differing.items()},
            "mismatches": {
                "cases": 0 if check is None else check.assertions_failed,
                "words": 0 if check is None else check.mismatches + check.nan_code_mismatches,
                "by_class": {} if check is None else dict(check.mismatches_by_class),
            },
            "screen": dict(self.screen_mismatches),
        }


def record_outputs(func: Callable[..., Any], calls: Sequence[GqCall]) -> list[Outputs]:
    """The kernel's ``(codes, scales)`` for each call, private copies, checked for form.

    Raises:
        KernelFaultError: for a call that raised, exited or timed out, or an
            answer that is not a (codes, scales) pair of the scheme's dtypes and shapes.
    """
    outputs: list[Outputs] = []
    for call in calls:
        got = call_kernel(func, *call.args)
        if not isinstance(got, tuple) or len(got) != 2:
            raise KernelFaultError(_malformed(got, np.empty(0), np.empty(0)))
        outputs.append((np.array(got[0], copy=True), np.array(got[1], copy=True)))
    return outputs


def infer_rule(
    scheme: str, kernel: str, calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> Inference:
    """Every candidate of ``scheme`` against the kernel's ``outputs`` for ``calls``.

    Raises:
        ValueError: for a scheme without named scale rules, or outputs that do not pair with calls.
        KernelFaultError: for an output of the wrong dtype or shape.
    """
    if len(outputs) != len(calls):
        raise ValueError(f"{len(outputs)} outputs for {len(calls)} calls")
    candidates = rule_candidates(scheme)
    screened = _screen(candidates, calls, outputs)
    best = {c.rule: n for c, n in zip(candidates, screened, strict=True)}
    own = {  # each named rule's own declaration, screened: the tie-break between named rules
        c.base: n
        for c, n in zip(candidates, screened, strict=True)
        if not differing_axes(RULES[c.base], c.rule)
    }
    matching = [c.rule for c, n in zip(candidates, screened, strict=True) if n == 0 and calls]
    order = sorted(matching, key=lambda r: (_nearest(r, own)[1], _index(candidates, r)))
    for rule in order:  # the port screens; GQ, on the exact reference, decides
        check = _check(scheme, rule, calls, outputs)
        if check.status is GateStatus.PASS:
            return _result(scheme, kernel, calls, candidates, matching, rule, check, best, own)
    nearest = min(candidates, key=lambda c: (best[c.rule], _nearest(c.rule, own)[1])).rule
    check = _check(scheme, nearest, calls, outputs)
    found = _result(scheme, kernel, calls, candidates, [], nearest, check, best, own)
    return replace(found, status="not-reproduced")


def _index(candidates: Sequence[Candidate], rule: ScaleRule) -> int:
    """``rule``'s place in the enumeration (the tie-break)."""
    return next(i for i, c in enumerate(candidates) if c.rule == rule)


def _result(
    scheme: str,
    kernel: str,
    calls: Sequence[GqCall],
    candidates: Sequence[Candidate],
    matching: Sequence[ScaleRule],
    chosen: ScaleRule,
    check: GateResult,
    best: dict[ScaleRule, int],
    own: dict[str, int],
) -> Inference:
    named, _ = _nearest(chosen, own)
    differing = {
        k: (_text(getattr(RULES[named], k)), _text(getattr(chosen, k)))
        for k in differing_axes(RULES[named], chosen)
    }
    ambiguous = tuple(k for k in sorted({a for r in matching for a in differing_axes(chosen, r)}))
    return Inference(
        scheme,
        kernel,
        "reproduced" if matching else "not-reproduced",
        len(calls),
        len(candidates),
        tuple(matching),
        chosen,
        named,
        differing,
        ambiguous,
        check,
        {"chosen": best[chosen], "best": min(best.values(), default=0)},
    )


def _nearest(rule: ScaleRule, own: dict[str, int]) -> tuple[str, int]:
    """The named rule of ``rule``'s layout nearest to it, and the fields they differ on.

    Nearest: fewest differing fields, then fewest mismatches of the named rule's
    own declaration (``own``), then the order of the rules file.
    """
    same = [
        r
        for r in RULES.values()
        if (r.granularity, r.block, r.scale_format)
        == (rule.granularity, rule.block, rule.scale_format)
    ]
    scored = [
        (len(differing_axes(r, rule)), own.get(r.name, 0), i, r.name) for i, r in enumerate(same)
    ]
    count, _, _, name = min(scored)
    return name, count


def _check(
    scheme: str, rule: ScaleRule, calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> GateResult:
    """GQ under ``rule`` on the recorded outputs (the exact reference decides)."""
    answers = iter(outputs)

    def replay(*_args: Any) -> Outputs:
        return next(answers)

    return run_gq(replay, scheme=scheme, rule=rule, kernel_name="recorded", calls=calls)


def _screen(
    candidates: Sequence[Candidate], calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> list[int]:
    """Each candidate's mismatching words under the port (NaN codes as its ``nan_code`` says)."""
    if not candidates:
        return []
    rule = candidates[0].rule
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


def _fields(rule: ScaleRule) -> dict[str, Any]:
    return {k: _text(v) for k, v in vars(rule).items()}


def _text(value: object) -> Any:
    return getattr(value, "value", value)
