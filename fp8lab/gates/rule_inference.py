"""Which scale rule a black-box GQ kernel follows: a search over the rule language, on its outputs.

The kernel is called once per GQ call of the scheme (:func:`record_outputs`);
:func:`infer_rule` then searches the declarations of the scheme
(:mod:`fp8lab.gates.rule_candidates`) with :mod:`fp8lab.gates.rule_search`,
from each named rule: first the axes that decide the scale, on the kernel's
scales alone, then the element path's, on its codes given its scales
(:class:`fp8lab.gates.scale_screen.Screen`, the numpy port). Every value that
does as well at the result is tried in combination, so the declarations that
reproduce every call are all found. NVFP4's 256 declarations are each
screened (:func:`fp8lab.gates.nvfp4_candidates.nvfp4_screen`). The chosen
declaration (or, with no match, the nearest) is then re-checked by GQ itself
(:func:`fp8lab.gates.gq.run_gq`), against the exact reference, on the
recorded outputs; a reproduction is claimed only when that check passes.
When nothing reproduces, the record names the axes the search held fixed
and the first call no evaluated declaration explains.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fp8lab.gates.gq import GQ_RULES, GQ_SCHEMES, GqCall, run_gq
from fp8lab.gates.gq_case import _malformed, outputs_as_codes
from fp8lab.gates.gq_plan import _plan
from fp8lab.gates.nvfp4_candidates import NVFP4_HELD_FIXED, nvfp4_candidates, nvfp4_screen
from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.gates.rule_candidates import (
    ELEMENT_FIELDS,
    HELD_FIXED,
    SCALE_FIELDS,
    AnyRule,
    declaration,
    differing_axes,
    named_rules,
    scheme_groups,
)
from fp8lab.gates.rule_search import Evaluations, descend, tied_values
from fp8lab.gates.scale_screen import Screen
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import ScaleRule

__all__ = ["MAX_COMBINATIONS", "Inference", "infer_rule", "record_outputs"]

Outputs = tuple[np.ndarray, np.ndarray]
MAX_COMBINATIONS = 512  # tied values tried together at the result, at most


@dataclass(frozen=True)
class Inference:
    """What ``rules infer`` found; ``status`` is ``reproduced`` or ``not-reproduced``.

    ``matching`` are the declarations whose port reproduces every call;
    ``chosen`` the one reported (closest to a named rule), or with no match
    the nearest (fewest mismatching words); ``check`` is the gate's record of
    it on the recorded outputs. ``ambiguous_axes`` are the fields the matching
    declarations disagree on: the population cannot tell those values apart.
    ``held_fixed`` names the fields the search never varied, with the reason;
    ``first_unexplained`` the first call no evaluated declaration reproduces
    (empty when every call has one).
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
    held_fixed: dict[str, str] = field(default_factory=dict)
    first_unexplained: str = ""

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
            "held_fixed": dict(self.held_fixed),
            "first_unexplained_call": self.first_unexplained,
        }


def record_outputs(
    func: Callable[..., Any], calls: Sequence[GqCall], scheme: str | None = None
) -> list[Outputs]:
    """The kernel's ``(codes, scales)`` for each call, private copies, checked for form.

    With ``scheme``, float8 arrays of its element and scale formats come as their bytes.

    Raises:
        KernelFaultError: for a call that raised, exited or timed out, or an
            answer that is not a (codes, scales) pair of the scheme's dtypes and shapes.
    """
    outputs: list[Outputs] = []
    for call in calls:
        got = call_kernel(func, *call.args)
        if scheme is not None:
            got = _as_bytes(got, scheme)
        if not isinstance(got, tuple) or len(got) != 2:
            raise KernelFaultError(_malformed(got, np.empty(0), np.empty(0)))
        outputs.append((np.array(got[0], copy=True), np.array(got[1], copy=True)))
    return outputs


def _as_bytes(got: Any, scheme: str) -> Any:
    """``got`` with float8 arrays of the scheme's element and scale formats as their bytes.

    Raises:
        KernelFaultError: for a float8 array of another format.
    """
    try:
        element = get_format(_plan(scheme, GQ_RULES[scheme][0])[0].element)
        return outputs_as_codes(got, element, GQ_SCHEMES[scheme][2])
    except ValueError as exc:
        raise KernelFaultError(str(exc)) from None


def infer_rule(
    scheme: str, kernel: str, calls: Sequence[GqCall], outputs: Sequence[Outputs]
) -> Inference:
    """The declarations of ``scheme`` that reproduce the kernel's ``outputs`` for ``calls``.

    Raises:
        ValueError: for a scheme without named scale rules, or outputs that do not pair with calls.
        KernelFaultError: for an output of the wrong dtype or shape.
    """
    if len(outputs) != len(calls):
        raise ValueError(f"{len(outputs)} outputs for {len(calls)} calls")
    named = named_rules(scheme)
    outputs = [_as_bytes(o, scheme) for o in outputs]
    if scheme == "nvfp4":
        return _nvfp4(kernel, calls, outputs, named)
    first = next(iter(named.values()))
    assert isinstance(first, ScaleRule)
    screen = Screen(first, calls, outputs)
    found = search_rules(scheme, named, len(calls), screen.scales, screen.codes, screen.both)
    return _decide(scheme, kernel, calls, found, lambda r: _check(scheme, r, calls, outputs))


@dataclass(frozen=True)
class Found:
    """What a search found: the matching declarations, the nearest, and what it evaluated."""

    matching: tuple[AnyRule, ...]
    nearest: AnyRule
    totals: dict[tuple[object, ...], int]
    own: dict[str, int]
    evaluated: int
    first_unexplained: int | None
    unexplained_part: str


Counts = Callable[[Any], Any]


def search_rules(
    scheme: str,
    named: Mapping[str, AnyRule],
    n_calls: int,
    scales: Counts | None,
    codes: Counts,
    both: Counts,
) -> Found:
    """The two-stage search from each named rule (``scales`` None: the element stage alone)."""
    scale_groups, element_groups = scheme_groups(scheme)
    s1 = Evaluations(scales, n_calls, SCALE_FIELDS) if scales is not None else None
    s2 = Evaluations(codes, n_calls, ELEMENT_FIELDS if s1 is not None else None)
    full = Evaluations(both, n_calls)
    ends: dict[tuple[object, ...], AnyRule] = {}
    for base, rule in named.items():
        start = replace(rule, name=f"inferred-{scheme}", source=f"{base}, as searched")
        mid = descend(start, scale_groups, s1) if s1 is not None else start
        if s1 is not None and s1.total(mid) > min(
            (s1.total(e) for e in ends.values()), default=1 << 62
        ):
            continue
        end = descend(mid, element_groups, s2)
        ends.setdefault(declaration(end), end)
    matching: dict[tuple[object, ...], AnyRule] = {}
    for end in ends.values():
        if full.total(end):
            continue
        ties = (tied_values(end, scale_groups, s1) if s1 is not None else []) + tied_values(
            end, element_groups, s2
        )
        for combo in itertools.islice(itertools.product(*ties), MAX_COMBINATIONS):
            found = _combined(end, combo)
            # its own scales are the kernel's, so its codes are those given the kernel's
            if found is None or (s1 is not None and s1.total(found)) or s2.total(found):
                continue
            matching.setdefault(declaration(found), found)
    own = {n: full.total(r) for n, r in named.items()}
    nearest = min(ends.values(), key=lambda r: (full.total(r), _nearest(r, named, own)[1]))
    stage_worst = [(s1, "scales")] if s1 is not None else []
    first, part = None, ""
    for scores, what in [*stage_worst, (s2, "codes")]:
        i = scores.first_unexplained()
        if i is not None and (first is None or i < first):
            first, part = i, what
    count = full.count + s2.count + (s1.count if s1 is not None else 0)
    totals = {declaration(r): full.total(r) for r in [*ends.values(), *matching.values()]}
    return Found(tuple(matching.values()), nearest, totals, own, count, first, part)


def _combined(end: AnyRule, combo: Sequence[AnyRule]) -> AnyRule | None:
    """``end`` with every axis each rule of ``combo`` changes (None: a rule no rule accepts)."""
    values = {a: getattr(r, a) for r in combo for a in differing_axes(end, r)}
    try:
        return replace(end, **values)
    except ValueError:
        return None


def _decide(
    scheme: str,
    kernel: str,
    calls: Sequence[Any],
    found: Found,
    check: Callable[[AnyRule], GateResult],
) -> Inference:
    """The reported declaration: the matching one closest to a named rule that the gate passes."""
    named = named_rules(scheme)
    order = sorted(found.matching, key=lambda r: _nearest(r, named, found.own)[1])
    for rule in order:  # the port screens; the gate, on the exact reference, decides
        result = check(rule)
        if result.status is GateStatus.PASS:
            return _result(scheme, kernel, calls, found, rule, result, True)
    return _result(scheme, kernel, calls, found, found.nearest, check(found.nearest), False)


def _result(
    scheme: str,
    kernel: str,
    calls: Sequence[Any],
    found: Found,
    chosen: AnyRule,
    check: GateResult,
    reproduced: bool,
) -> Inference:
    rules = named_rules(scheme)
    named, _ = _nearest(chosen, rules, found.own)
    differing = {
        k: (_text(getattr(rules[named], k)), _text(getattr(chosen, k)))
        for k in differing_axes(rules[named], chosen)
    }
    matching = found.matching if reproduced else ()
    ambiguous = tuple(sorted({a for r in matching for a in differing_axes(chosen, r)}))
    first = ""
    if not reproduced and found.first_unexplained is not None:
        call = calls[found.first_unexplained]
        first = f"{call.name} ({call.label}): its {found.unexplained_part}"
    held = NVFP4_HELD_FIXED if scheme == "nvfp4" else HELD_FIXED
    return Inference(
        scheme,
        kernel,
        "reproduced" if reproduced else "not-reproduced",
        len(calls),
        found.evaluated,
        tuple(matching),
        chosen,
        named,
        differing,
        ambiguous,
        check,
        {
            "chosen": found.totals.get(declaration(chosen), 0),
            "best": min(found.totals.values(), default=0),
        },
        dict(held),
        first,
    )


def _nvfp4(
    kernel: str, calls: Sequence[GqCall], outputs: Sequence[Outputs], named: dict[str, AnyRule]
) -> Inference:
    """Every NVFP4 declaration screened (256: the product is small)."""
    candidates = [rule for rule, _ in nvfp4_candidates()]
    screened = nvfp4_screen(candidates, calls, outputs)
    totals = {declaration(c): n for c, n in zip(candidates, screened, strict=True)}
    matching = tuple(c for c, n in zip(candidates, screened, strict=True) if n == 0 and calls)
    own = {name: totals.get(declaration(r), 0) for name, r in named.items()}
    nearest = min(candidates, key=lambda c: (totals[declaration(c)], _nearest(c, named, own)[1]))
    found = Found(matching, nearest, totals, own, len(candidates), None, "")
    return _decide("nvfp4", kernel, calls, found, lambda r: _check("nvfp4", r, calls, outputs))


def _nearest(
    rule: AnyRule, named: Mapping[str, AnyRule], own: Mapping[str, int]
) -> tuple[str, int]:
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
