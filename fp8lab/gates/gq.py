"""Gate GQ: a dynamic or block-scaled quant kernel against its rule's exact reference.

The kernel is ``FUNC(x) -> (codes, scales)`` with ``x`` float32 or bfloat16
[M, K]; codes uint8 [M, K]; scales float32 [1] (per-tensor), [M]
(per-token), [M, K/128] (per-group), or e8m0 bytes (uint8) [M, K/32]
(mxfp8). For nvfp4 it is ``FUNC(x, global_scale) -> (codes, scales)``:
``global_scale`` is a float32 [1] global amax (TE derives ``S_enc = 2688 /
amax`` from it), and each input is called twice, with the tensor's amax (NaN
skipped) and with float32(1.5 x it); codes are e2m1fn, one per byte in the
low nibble, and scales e4m3fn bytes (uint8) [M, K/16]. Every word is
checked bitwise against :func:`fp8lab.refs.reference_scheme_quant` (nvfp4:
:func:`fp8lab.refs.reference_nvfp4_quant`) under the rule the caller names
(never one the kernel declares): codes bytewise, scales by their bytes. The
cases are :func:`fp8lab.populations.schemes.scheme_population` x input dtype
(for per-tensor and nvfp4, each row of a population case is a tensor of its
own, so every constructed amax is a tensor's amax); each case is one kernel
call, one assertion, and its label is the word class. The kernel gets
private read-only copies (``fp8lab.runtime.guard``); every expectation is computed
before the call; a raise, an exit or a malformed result fails that case.
Vacuity guards: no words examined is a FAIL, and so is a run whose reference
codes are zero in magnitude for half or more of the words.

The command ``fp8lab gates --gate GQ --scheme S --rule R [--kernel MODULE:FUNC]``
calls this function with the same names (docs/gates/gq.md); ``GQ_RULES`` lists
the rules each scheme accepts, and the built-in ports are
:data:`fp8lab.kernels.scheme.SCHEME_PORTS`. Of the NVFP4 rules only those whose
element path is modelled (``element_source``) are GQ rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fp8lab.gates.gq_case import _run_case
from fp8lab.gates.gq_plan import (
    GQ_INPUT_DTYPES,
    GQ_RULES,
    GQ_SCHEMES,
    _check_dtypes,
    _plan,
)
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender, screen
from fp8lab.populations.rule_splits import split_cases
from fp8lab.populations.schemes import RULE_SPLIT, scheme_population
from fp8lab.specs.format_dtypes import input_dtype
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import Nvfp4ScaleRule
from fp8lab.specs.scale_rules import ScaleRule

__all__ = ["GQ_INPUT_DTYPES", "GQ_RULES", "GQ_SCHEMES", "GqCall", "gq_calls", "run_gq"]

_SPLIT = RULE_SPLIT  # the word class of the calls derived from the rule's split table


@dataclass(frozen=True)
class GqCall:
    """One kernel call GQ makes: word class, case name, arguments (``args[0]`` is x)."""

    label: str
    name: str
    args: tuple[Any, ...]


def gq_calls(
    scheme: str,
    rule: str | ScaleRule | Nvfp4ScaleRule,
    *,
    seed: int = 0,
    input_dtypes: Sequence[str] = GQ_INPUT_DTYPES,
) -> list[GqCall]:
    """The kernel calls GQ makes for ``scheme`` under ``rule``, in order (bundles export them).

    Raises:
        ValueError: as :func:`run_gq`.
    """
    plan, _ = _plan(scheme, rule)
    _check_dtypes(input_dtypes)
    tensors = [
        (label, part)
        for label, words in scheme_population(plan.element, seed)
        for part in (words if plan.per_tensor else [words])
    ]
    calls = [
        GqCall(label, f"{label}#{i}/{d}{tag}", args)
        for i, (label, words) in enumerate(tensors)
        for d in input_dtypes
        # the harness's own copy, never handed out
        for tag, args in plan.calls(
            (words.reshape(1, -1) if words.ndim == 1 else words).astype(input_dtype(d))
        )
    ]
    for d in input_dtypes:  # the amaxes where the rule and its one-axis variants split
        for j, words in enumerate(split_cases(plan.splits(), plan.element, d)):
            for r, part in enumerate(words if plan.per_tensor else [words]):
                name = f"{_SPLIT}#{j}.{r}/{d}" if plan.per_tensor else f"{_SPLIT}#{j}/{d}"
                with np.errstate(invalid="ignore"):  # a signalling NaN amax, quieted
                    x = (part.reshape(1, -1) if part.ndim == 1 else part).astype(input_dtype(d))
                calls += [GqCall(_SPLIT, name + tag, args) for tag, args in plan.calls(x)]
    return calls


def run_gq(
    func: Callable[..., Any],
    *,
    scheme: str,
    rule: str | ScaleRule | Nvfp4ScaleRule,
    kernel_name: str | None = None,
    seed: int = 0,
    input_dtypes: Sequence[str] = GQ_INPUT_DTYPES,
    max_offenders: int = 8,
    calls: Sequence[GqCall] | None = None,
) -> GateResult:
    """Run GQ on ``func`` for ``scheme`` under ``rule``.

    ``kernel_name`` is the record's kernel (default: ``func.name``, else
    "kernel"); the rule is always the caller's. ``calls`` (default
    :func:`gq_calls`) are the calls to make: a bundle's GQ check passes the
    calls its bundle holds, so a bundle with none examined nothing.

    Raises:
        ValueError: for an unknown scheme, rule or input dtype, or a rule that
            does not describe the scheme (an NVFP4 rule without a modelled
            element path included).
    """
    plan, rule_name = _plan(scheme, rule)
    _check_dtypes(input_dtypes)
    own = calls is None  # GQ's own population: the record carries the rule's split table
    if calls is None:
        calls = gq_calls(scheme, rule, seed=seed, input_dtypes=input_dtypes)
    elem = get_format(plan.element)
    offenders: list[Offender] = []
    by_class: Counter[str] = Counter()
    cases: list[CaseResult] = []
    nonzero = codes = 0
    for call in calls:
        want = plan.want(call.args)  # every expectation before the call
        case, nz, n = _run_case(
            func,
            call.label,
            call.name,
            call.args,
            want,
            elem,
            offenders,
            by_class,
            max_offenders,
            plan.same_nan,
            GQ_SCHEMES[scheme][2],
        )
        cases.append(case)
        nonzero, codes = nonzero + nz, codes + n
    status, reason = _verdict(cases, nonzero, codes)
    return GateResult.from_cases(
        "GQ",
        kernel_name or getattr(func, "name", None) or "kernel",
        status,
        reason,
        cases,
        mismatches_by_class=dict(sorted(by_class.items())),
        first_offenders=tuple(offenders),
        scheme=scheme,
        rule=rule_name,
        splits=plan.splits() if own else (),
    )


def _verdict(cases: Sequence[CaseResult], nonzero: int, codes: int) -> tuple[GateStatus, str]:
    """The shared pre-verdict screen, then mismatches.

    The run is vacuous if half or more of its reference codes are zero in magnitude.
    """
    vacuous = ["the run"] if nonzero * 2 <= codes else []
    early = screen(cases, vacuous=vacuous, what="reference codes mostly zero")
    if early is not None:
        return early
    bad = [c.name for c in cases if c.assertions_failed]
    if bad:
        return GateStatus.FAIL, f"mismatches in {len(bad)} of {len(cases)} cases"
    return GateStatus.PASS, ""
