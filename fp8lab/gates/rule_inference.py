"""Which scale rule a black-box GQ kernel follows: every candidate declaration against its outputs.

The kernel is called once per GQ call of the scheme (:func:`record_outputs`);
:func:`infer_rule` then holds those outputs against every candidate of
:func:`~fp8lab.gates.rule_candidates.rule_candidates`. Each candidate is
screened with the numpy port (:func:`fp8lab.kernels.scheme.scheme_quant`,
one evaluation per declaration, NaN-code choice aside; nvfp4:
:func:`fp8lab.kernels.scheme.nvfp4_quant`); the chosen candidate
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
from fp8lab.gates.nvfp4_candidates import nvfp4_screen
from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.gates.rule_candidates import (
    AnyRule,
    Candidate,
    differing_axes,
    named_rules,
    rule_candidates,
)
from fp8lab.gates.scale_screen import scale_screen
from fp8lab.runtime.guard import KernelFaultError, call_kernel

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
    matching: tuple[AnyRule, ...]
    chosen: AnyRule | None
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
    named = named_rules(scheme)
    if scheme == "nvfp4":
        screened = nvfp4_screen([c.rule for c in candidates], calls, outputs)
    else:
        screened = scale_screen(candidates, calls, outputs)
    best = {c.rule: n for c, n in zip(candidates, screened, strict=True)}
    own = {  # each named rule's own declaration, screened: the tie-break between named rules
        c.base: n
        for c, n in zip(candidates, screened, strict=True)
        if not differing_axes(named[c.base], c.rule)
    }
    matching = [c.rule for c, n in zip(candidates, screened, strict=True) if n == 0 and calls]
    order = sorted(matching, key=lambda r: (_nearest(r, named, own)[1], _index(candidates, r)))
    for rule in order:  # the port screens; GQ, on the exact reference, decides
        check = _check(scheme, rule, calls, outputs)
        if check.status is GateStatus.PASS:
            return _result(scheme, kernel, calls, candidates, matching, rule, check, best, own)
    nearest = min(candidates, key=lambda c: (best[c.rule], _nearest(c.rule, named, own)[1])).rule
    check = _check(scheme, nearest, calls, outputs)
    found = _result(scheme, kernel, calls, candidates, [], nearest, check, best, own)
    return replace(found, status="not-reproduced")


def _index(candidates: Sequence[Candidate], rule: AnyRule) -> int:
    """``rule``'s place in the enumeration (the tie-break)."""
    return next(i for i, c in enumerate(candidates) if c.rule == rule)


def _result(
    scheme: str,
    kernel: str,
    calls: Sequence[GqCall],
    candidates: Sequence[Candidate],
    matching: Sequence[AnyRule],
    chosen: AnyRule,
    check: GateResult,
    best: dict[AnyRule, int],
    own: dict[str, int],
) -> Inference:
    rules = named_rules(scheme)
    named, _ = _nearest(chosen, rules, own)
    differing = {
        k: (_text(getattr(rules[named], k)), _text(getattr(chosen, k)))
        for k in differing_axes(rules[named], chosen)
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


def _nearest(rule: AnyRule, named: dict[str, AnyRule], own: dict[str, int]) -> tuple[str, int]:
    """The named rule of the scheme (``named``) nearest to ``rule``, and the fields they differ on.

    Nearest: fewest differing fields, then fewest mismatches of the named rule's
    own declaration (``own``), then the order of the rules.
    """
    scored = [
        (len(differing_axes(r, rule)), own.get(r.name, 0), i, r.name)
        for i, r in enumerate(named.values())
    ]
    count, _, _, name = min(scored)
    return name, count


def _check(
    scheme: str, rule: AnyRule, calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> GateResult:
    """GQ under ``rule`` on the recorded outputs (the exact reference decides)."""
    answers = iter(outputs)

    def replay(*_args: Any) -> Outputs:
        return next(answers)

    return run_gq(replay, scheme=scheme, rule=rule, kernel_name="recorded", calls=calls)


def _fields(rule: AnyRule) -> dict[str, Any]:
    return {k: _text(v) for k, v in vars(rule).items()}


def _text(value: object) -> Any:
    if isinstance(value, tuple):  # an nvfp4 rule's block_bounds: a JSON list
        return list(value)
    return getattr(value, "value", value)
