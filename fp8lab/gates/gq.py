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

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.gates.compare import compare_codes
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender, screen
from fp8lab.populations.schemes import scheme_population
from fp8lab.refs import reference_nvfp4_quant, reference_scheme_quant
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, Granularity, ScaleRule, get_rule
from fp8lab.specs.scheme_layout import SCHEME_LAYOUTS

__all__ = ["GQ_INPUT_DTYPES", "GQ_RULES", "GQ_SCHEMES", "GqCall", "gq_calls", "run_gq"]

GQ_INPUT_DTYPES = ("float32", "bfloat16")
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
_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def _malformed(got: object, want_codes: np.ndarray, want_scales: np.ndarray) -> str:
    if not isinstance(got, tuple) or len(got) != 2:
        return f"kernel returned {type(got).__name__}, want a (codes, scales) tuple"
    for what, arr, want in (("codes", got[0], want_codes), ("scales", got[1], want_scales)):
        if not isinstance(arr, np.ndarray):
            return f"kernel returned {what} as {type(arr).__name__}, not a numpy array"
        if arr.dtype != want.dtype or arr.shape != want.shape:
            return f"kernel returned {what} {arr.dtype}{arr.shape}, want {want.dtype}{want.shape}"
    return ""


def _run_case(
    func: Callable[..., Any],
    label: str,
    name: str,
    args: tuple[Any, ...],
    want: tuple[np.ndarray, np.ndarray],
    elem: FormatSpec,
    offenders: list[Offender],
    by_class: Counter[str],
    max_offenders: int,
) -> tuple[CaseResult, int, int]:
    """One kernel call on ``args`` (``args[0]`` is x), checked against ``want``."""
    want_codes, want_scales = want
    n_words = want_codes.size + want_scales.size
    nonzero = int(((want_codes & elem.magnitude_mask) != 0).sum())
    try:
        got = call_kernel(func, *args)
        error = _malformed(got, want_codes, want_scales)
    except KernelFaultError as exc:
        got, error = None, exc.reason
    if error:
        case = CaseResult(name, n_words, 1, 1, 0, 0, nonzero / want_codes.size, error)
        return case, nonzero, want_codes.size
    codes = np.array(got[0], np.uint8, copy=True)
    scales = np.array(got[1], copy=True)
    cmp = compare_codes(codes.reshape(-1), want_codes.reshape(-1), elem)
    scale_bad = (
        scales.view(np.uint8).reshape(scales.size, -1)
        != want_scales.view(np.uint8).reshape(want_scales.size, -1)
    ).any(axis=1)
    mismatches = cmp.mismatches + int(scale_bad.sum())
    by_class[label] += mismatches + cmp.nan_code_mismatches
    for i in np.flatnonzero(cmp.mismatch | cmp.nan_code)[: max(0, max_offenders - len(offenders))]:
        got_c, want_c = f"{codes.reshape(-1)[i]:#04x}", f"{want_codes.reshape(-1)[i]:#04x}"
        offenders.append(Offender(name, label, int(i), _input_hex(args, int(i)), got_c, want_c))
    for j in np.flatnonzero(scale_bad)[: max(0, max_offenders - len(offenders))]:
        got_s, want_s = _word_hex(scales, j), _word_hex(want_scales, j)
        offenders.append(Offender(name, label, int(j), f"scale[{j}]", got_s, want_s))
    failed = int(mismatches + cmp.nan_code_mismatches > 0)
    result = CaseResult(
        name, n_words, 1, failed, mismatches, cmp.nan_code_mismatches, nonzero / want_codes.size
    )
    return result, nonzero, want_codes.size


def _word_hex(words: np.ndarray, j: int) -> str:
    """Word ``j``'s bit pattern as one hex number, in its own width.

    float32: 8 digits; bfloat16: 4; an e8m0/e4m3 scale byte: 2.
    """
    raw = np.asarray(words).reshape(-1)[j : j + 1].view(np.uint8).tobytes()
    return "0x" + raw[::-1].hex()  # little-endian bytes, most significant first


# the names of a kernel call's inputs, in argument order (nvfp4 adds the global scale)
_INPUT_NAMES = ("x", "global_scale")


def _input_hex(args: tuple[Any, ...], i: int) -> str:
    """The inputs behind output word ``i`` as hex: ``x``'s word ``i`` in its own dtype.

    From the harness's own copy of the arguments, never the kernel's. One input:
    the bare hex (``0xc02ad8f1``, a bfloat16 ``0xc02b``); with a global scale
    (nvfp4) each input by name: ``x=0xc02ad8f1 global_scale=0x40400000``.
    """
    x = _word_hex(args[0], i)
    if len(args) == 1:
        return x
    rest = (f"{n}={_word_hex(a, 0)}" for n, a in zip(_INPUT_NAMES[1:], args[1:], strict=True))
    return " ".join((f"x={x}", *rest))


@dataclass(frozen=True)
class _Plan:
    """What one scheme's cases need: the element format and, per input, its calls.

    ``per_tensor``: each population row is a tensor of its own, so every
    constructed amax is a tensor's amax. ``calls(x)`` lists (name suffix,
    kernel arguments); ``want(args)`` is the rule's reference for those arguments.
    """

    element: str
    per_tensor: bool
    calls: Callable[[np.ndarray], list[tuple[str, tuple[Any, ...]]]]
    want: Callable[[tuple[Any, ...]], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class GqCall:
    """One kernel call GQ makes: word class, case name, arguments (``args[0]`` is x)."""

    label: str
    name: str
    args: tuple[Any, ...]


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
        if not isinstance(nv, Nvfp4ScaleRule) or nv.name not in GQ_RULES[scheme]:
            raise ValueError(f"rule {_name(rule)!r} is not an nvfp4 rule GQ models")
        if nv != NVFP4_RULES[nv.name]:  # the record names the rule: it must be that rule
            raise ValueError(f"rule {nv.name!r} differs from the published rule of that name")
        plan = _Plan(
            "e2m1fn",
            True,
            lambda x: [(tag, (x, g)) for tag, g in _global_amaxes(x)],
            lambda a: reference_nvfp4_quant(a[0].astype(np.float32), float(a[1][0]), nv),
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
        lambda a: reference_scheme_quant(a[0].astype(np.float32), spec),
    )
    return plan, spec.name


def _name(rule: object) -> str:
    return str(getattr(rule, "name", rule))


def _check_dtypes(input_dtypes: Sequence[str]) -> None:
    unknown = set(input_dtypes) - set(_DTYPES)
    if unknown:
        raise ValueError(f"unknown input dtypes {sorted(unknown)}; use {GQ_INPUT_DTYPES}")


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
    return [
        GqCall(label, f"{label}#{i}/{d}{tag}", args)
        for i, (label, words) in enumerate(tensors)
        for d in input_dtypes
        # the harness's own copy, never handed out
        for tag, args in plan.calls(
            (words.reshape(1, -1) if words.ndim == 1 else words).astype(_DTYPES[d])
        )
    ]


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
            func, call.label, call.name, call.args, want, elem, offenders, by_class, max_offenders
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
