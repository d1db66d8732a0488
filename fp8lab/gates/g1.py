"""Gate G1: a static-quant kernel against its static rule's reference, bitwise, zero tolerance.

The rule (``rule``, :mod:`fp8lab.specs.static_rules`; default the seed's
``x * float32(1/s)``) fixes the element path and the scales' layout; the
reference is :func:`fp8lab.refs.static_quant.reference_static_quant`, the
cases :func:`fp8lab.gates.g1_cases.g1_cases`. Per tensor, cases are scales x
input dtypes (the seed's seven scales, float32 and bfloat16 input). In each
case one assertion per word class checks that every word of that class gives
the reference byte. A NaN input the rule leaves NaN must give the code of
the NaN policy the gate holds the kernel to (one of
``fp8lab.specs.nan.NAN_POLICIES``: the caller's, else the ``nan_policy`` the
kernel declares in this process, else ``canonical``, 0x7F); the policy, where
it came from, and what a kernel in a process of its own declared are
recorded. NaN-code disagreements (both codes NaN) are counted apart from the
byte mismatches but fail the assertion all the same, unless the rule's
``nan_code`` is ``any``.
The kernel gets a private read-only copy of each input (``fp8lab.runtime.guard``);
every expectation is computed before the call, and any exception or exit of
the kernel fails that case. Vacuity guards: a case that examines no words
fails, and so does one where half or more of the reference bytes are zero in
magnitude.

Every call hands the kernel one float32 scale, as vLLM's and vllm.cpp's quant
kernels take it (the per-shard collapse happens where a checkpoint is loaded).
The shard case runs when asked for (``shard_scales``, ``--shard-scales``), once
per input dtype: the kernel is handed the per-shard scales as one float32
array and must collapse them itself with ``.max()`` (vLLM modelopt.py:528);
the gate takes their max independently for the reference and the population.

A kernel may return its codes as a float8 array of the rule's format; one of
another format fails every case with one line naming both. When a FAIL's
every mismatch is what a neighbouring rule computes (one axis changed, the
other format, or another built-in rule), the reason names it
(:mod:`fp8lab.gates.g1_explain`), computed from the outputs alone.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fp8lab.gates.compare import CodeComparison, as_codes, compare_codes, nan_code_mask
from fp8lab.gates.g1_cases import G1Case, g1_cases
from fp8lab.gates.g1_explain import explain
from fp8lab.gates.records import (
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    mostly_zero,
    screen,
)
from fp8lab.kernels.protocols import QuantKernel
from fp8lab.kernels.sources.wire import type_name
from fp8lab.populations import G1_SEED
from fp8lab.refs.static_quant import reference_static_quant
from fp8lab.runtime.guard import KernelFaultError, call_kernel, private_readonly
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import INPUT_DTYPES, input_dtype
from fp8lab.specs.formats import get_format
from fp8lab.specs.gates import GATES
from fp8lab.specs.nan import HeldNanPolicy, NanPolicy, held_nan_policy, nan_policy_help
from fp8lab.specs.scale_rules import NanCode, ScaleRule
from fp8lab.specs.static_rules import DEFAULT_STATIC_RULE, get_static_rule

__all__ = ["CONVENTION", "G1_INPUT_DTYPES", "G1_SCALES", "G1_SHARD_SCALES", "run_g1"]

G1_SCALES = (1.0, 0.5, 0.035, 0.0092, 7.25, 0.13, 0.77)
G1_SHARD_SCALES = (0.3, 0.9, 0.0625)  # max in the middle: first, last and min are all wrong
CONVENTION = f"G1 calls {GATES['G1'].convention}"
SHARD_CONVENTION = (
    "G1's shard case calls quantize(x, scales) with scales a float32 array of per-shard "
    "scales the kernel collapses (the max), and wants uint8 codes [N] back"
)
G1_INPUT_DTYPES = INPUT_DTYPES


@dataclass
class _Found:
    """What a run collects across its cases: offenders, mismatches by class, the answers."""

    offenders: list[Offender] = field(default_factory=list)
    by_class: Counter[str] = field(default_factory=Counter)
    outputs: list[tuple[G1Case, np.ndarray, np.ndarray]] = field(default_factory=list)


def _hex(words: np.ndarray, i: int) -> str:
    return "0x" + words[i : i + 1].tobytes()[::-1].hex()


def _checked(got: object, shape: tuple[int, ...], fmt: FormatSpec) -> tuple[object, str]:
    """The kernel's answer as codes of ``fmt`` (a float8 array of it by its bytes), or why not."""
    try:
        got = as_codes(got, fmt)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(got, np.ndarray):
        return None, f"kernel returned {type_name(got)}, not a numpy array"
    if got.dtype != np.uint8 or got.shape != shape:
        return None, f"kernel returned {got.dtype}{got.shape}, want uint8{shape}"
    return got, ""


def _quantize(kernel: QuantKernel, x: np.ndarray, scale: object) -> object:
    return kernel.quantize(x, scale)


def _ahead(kernel: QuantKernel, x: np.ndarray, scale: object) -> Callable[[], object]:
    """The kernel's answer for ``x``, to be read once.

    A kernel in a process of its own gets its (private) inputs now and runs
    while this process computes the expectation; it cannot touch this
    process. Any other kernel is called when the answer is read, after the
    expectation.
    """
    isolated = sys.modules.get("fp8lab.kernels.sources.isolated")  # not loaded: not isolated
    if isolated is not None and isinstance(kernel, isolated.IsolatedKernel):
        try:
            answer: Callable[[], object] = kernel.submit("quantize", private_readonly(x), scale)
            return answer
        except KernelFaultError as exc:  # its process had already ended: so says the answer
            fault = exc

            def ended() -> object:
                raise fault

            return ended
    return lambda: call_kernel(_quantize, kernel, x, scale)


def _expected(
    x: np.ndarray, scales: object, rule: ScaleRule, policy: NanPolicy
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """The reference codes (NaN inputs the rule leaves NaN: the policy's code); where x is NaN."""
    want = reference_static_quant(x, scales, rule).reshape(-1)
    wide = x.astype(np.float32).reshape(-1)
    fmt = get_format(rule.element)
    nan = np.isnan(wide)
    held = nan & nan_code_mask(want, fmt)  # a clamp may have sent NaN to a number
    pos, neg = policy.codes(fmt)
    want[held] = np.where(np.signbit(wide[held]), neg, pos)
    return want, nan


def _run_case(
    kernel: QuantKernel,
    case: G1Case,
    rule: ScaleRule,
    found: _Found,
    max_offenders: int,
    policy: NanPolicy,
) -> CaseResult:
    x = case.words.astype(input_dtype(case.dtype))  # the harness's own copy, never handed out
    labels = np.array(case.labels)
    classes = sorted(set(case.labels))
    fmt = get_format(rule.element)
    answer = _ahead(kernel, x, case.handed)
    want, nan_in = _expected(x, case.scales, rule, policy)  # a signal here: no answer
    try:
        raw, error = answer(), ""
    except KernelFaultError as exc:
        raw, error = None, exc.reason
    nonzero = float(np.mean((want & fmt.magnitude_mask) != 0)) if want.size else 0.0
    if not error:
        try:
            raw, error = _checked(raw, x.shape, fmt)
        except KernelFaultError as exc:
            raw, error = None, exc.reason
    if "TypeError" in error:  # most often the signature: say what G1 calls
        shard = case.name.startswith("s=max")
        error = f"{error}; {SHARD_CONVENTION if shard else CONVENTION}"
    if error or raw is None:
        return CaseResult(case.name, x.size, len(classes), len(classes), 0, 0, nonzero, error)
    got = np.array(raw, np.uint8, copy=True).reshape(-1)  # a plain array cannot vouch for itself
    found.outputs.append((case, x, got))
    result = compare_codes(got, want, fmt)
    if rule.nan_code is NanCode.ANY:  # every NaN code is the same NaN
        result = CodeComparison(result.examined, result.mismatch, np.zeros_like(result.nan_code))
    wrong = result.mismatch | result.nan_code
    failed = 0
    for cls in classes:
        in_class = labels == cls
        found.by_class[cls] += int((result.mismatch & in_class).sum())
        failed += bool((wrong & in_class).any())
    flat = x.reshape(-1)
    for i in np.flatnonzero(wrong)[: max(0, max_offenders - len(found.offenders))]:
        found.offenders.append(
            Offender(
                case.name,
                str(labels[i]),
                int(i),
                _hex(flat, int(i)),
                f"{got[i]:#04x}",
                f"{want[i]:#04x}",
            )
        )
    return CaseResult(
        case.name,
        x.size,
        len(classes),
        failed,
        result.mismatches,
        result.nan_code_mismatches,
        nonzero,
        nan_input_mismatches=int((wrong & nan_in).sum()),
    )


def _verdict(cases: Sequence[CaseResult], held: HeldNanPolicy) -> tuple[GateStatus, str]:
    early = screen(cases, vacuous=mostly_zero(cases), what="reference mostly zero")
    if early:
        return early
    # NaN inputs are the only ones a NaN-code disagreement can come from.
    numbers = [c for c in cases if c.mismatches + c.nan_code_mismatches > c.nan_input_mismatches]
    nans = [c for c in cases if c.nan_input_mismatches]
    reasons = [f"byte mismatches in {len(numbers)} of {len(cases)} cases"] if numbers else []
    if nans:
        reasons.append(
            f"NaN inputs break NaN policy {held.policy.name!r} in {len(nans)} of {len(cases)} "
            f"cases; if the kernel follows another documented policy, {nan_policy_help()}"
        )
        if held.disagreement:
            reasons.append(held.disagreement)
    if reasons or any(c.assertions_failed for c in cases):
        return GateStatus.FAIL, "; ".join(reasons) or "an assertion failed"
    return GateStatus.PASS, ""


def run_g1(
    kernel: QuantKernel,
    *,
    rule: str | ScaleRule = DEFAULT_STATIC_RULE,
    scales: Sequence[float] = G1_SCALES,
    input_dtypes: Sequence[str] = G1_INPUT_DTYPES,
    seed: int = G1_SEED,
    max_offenders: int = 8,
    special_words: bool = True,
    shard_scales: Sequence[float] = (),
    nan_policy: HeldNanPolicy | NanPolicy | None = None,
) -> GateResult:
    """Run G1 on ``kernel`` under the static ``rule``.

    Args:
        kernel: any :class:`QuantKernel`.
        rule: a static rule's name (:data:`fp8lab.specs.static_rules.STATIC_RULES`)
            or a :class:`ScaleRule` with a given scale; default the seed's.
        scales: static scales, one case each per input dtype.
        input_dtypes: ``"float32"`` and/or ``"bfloat16"``.
        seed: seed of the population's uniform words.
        max_offenders: how many offending words to keep.
        special_words: include ±NaN and ±inf (False: the seed's population).
        shard_scales: per-shard scales of the shard case, handed to the kernel as one
            float32 array it must collapse (the max); empty, the default: no shard
            case, every call gets one float32 scale (e.g. :data:`G1_SHARD_SCALES`).
            A per-tensor rule only.
        nan_policy: the NaN policy ``kernel`` is held to, resolved by the caller:
            a :class:`~fp8lab.specs.nan.HeldNanPolicy` (the command line's), or a
            policy of :data:`fp8lab.specs.nan.NAN_POLICIES`; None: the one
            ``kernel``, an object in this process, declares in its ``nan_policy``
            attribute, else canonical (:func:`fp8lab.specs.nan.held_nan_policy`).

    Raises:
        ValueError: for an unknown input dtype name or rule, a dynamic rule, a
            shard case under a per-row or per-block rule, or a NaN policy that
            is not one of the catalogue's.
    """
    spec = get_static_rule(rule)
    held = held_nan_policy(kernel, nan_policy)
    unknown = set(input_dtypes) - set(INPUT_DTYPES)
    if unknown:
        raise ValueError(f"unknown input dtypes {sorted(unknown)}; use {G1_INPUT_DTYPES}")
    found = _Found()
    plan = g1_cases(
        spec, scales, input_dtypes, seed=seed, special=special_words, shard_scales=shard_scales
    )
    cases = [_run_case(kernel, c, spec, found, max_offenders, held.policy) for c in plan]
    status, reason = _verdict(cases, held)
    errors = {c.error for c in cases}
    if len(cases) > 1 and len(errors) == 1 and "" not in errors:  # one fault: one line
        reason = f"{errors.pop()} (every case: {len(cases)})"
    measured = {}
    if status is GateStatus.FAIL and not any(c.error for c in cases):
        hint = explain(spec, found.outputs, held.policy, _expected)
        if hint:
            measured["explained_by"] = hint
            reason = f"{reason}; {hint['says']}"
    return GateResult.from_cases(
        "G1",
        kernel.name,
        status,
        reason,
        cases,
        mismatches_by_class=dict(sorted(found.by_class.items())),
        first_offenders=tuple(found.offenders),
        nan_policy=held.policy.name,
        nan_policy_source=held.source,
        nan_policy_declared_by_kernel=held.declared_by_kernel,
        measured=measured,
        rule=spec.name,
    )
