"""Gate G1: a static-quant kernel against the scan reference, bitwise, zero tolerance.

Cases are scales x input dtypes (the seed's seven scales, float32 and
bfloat16 input). In each case one assertion per word class checks that every
word of that class gives the reference byte. A NaN input must give the code of
the NaN policy the kernel declares by name (``nan_policy``, one of
``fp8lab.specs.nan.NAN_POLICIES``; undeclared means ``canonical``, 0x7F);
the policy is recorded in the result. NaN-code disagreements (both codes NaN)
are counted apart from the byte mismatches but fail the assertion all the same.
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
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.gates.compare import compare_codes
from fp8lab.gates.records import (
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    mostly_zero,
    screen,
)
from fp8lab.kernels.protocols import QuantKernel
from fp8lab.populations import G1_SEED, Population, g1_population
from fp8lab.refs import reference_quant_static
from fp8lab.runtime.guard import KernelFaultError, call_kernel, private_readonly
from fp8lab.specs.formats import FORMATS
from fp8lab.specs.nan import NAN_POLICIES, NanPolicy, declared_nan_policy, nan_policy_help
from fp8lab.specs.nan import nan_policy as _parse_nan_policy

__all__ = ["CONVENTION", "G1_INPUT_DTYPES", "G1_SCALES", "G1_SHARD_SCALES", "run_g1"]

G1_SCALES = (1.0, 0.5, 0.035, 0.0092, 7.25, 0.13, 0.77)
G1_SHARD_SCALES = (0.3, 0.9, 0.0625)  # max in the middle: first, last and min are all wrong
CONVENTION = (
    "G1 calls quantize(x, scale) with x a float32 or bfloat16 array [N] and scale one "
    "float32 scalar, and wants uint8 codes [N] back"
)
SHARD_CONVENTION = (
    "G1's shard case calls quantize(x, scales) with scales a float32 array of per-shard "
    "scales the kernel collapses (the max), and wants uint8 codes [N] back"
)
G1_INPUT_DTYPES = ("float32", "bfloat16")
_E4M3FN = FORMATS["e4m3fn"]
_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def _hex(words: np.ndarray, i: int) -> str:
    return "0x" + words[i : i + 1].tobytes()[::-1].hex()


def _bad_output(got: object, shape: tuple[int, ...]) -> str:
    if not isinstance(got, np.ndarray):
        return f"kernel returned {type(got).__name__}, not a numpy array"
    if got.dtype != np.uint8 or got.shape != shape:
        return f"kernel returned {got.dtype}{got.shape}, want uint8{shape}"
    return ""


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
    x: np.ndarray, scale: float, nan_policy: str
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """The reference codes, NaN inputs given the policy's code, and where x is NaN."""
    want = reference_quant_static(x, scale)
    wide = x.astype(np.float32)
    nan = np.isnan(wide)
    pos, neg = NAN_POLICIES[nan_policy].codes(_E4M3FN)
    want[nan] = np.where(np.signbit(wide[nan]), neg, pos)
    return want, nan


def _run_case(
    kernel: QuantKernel,
    population: Population,
    scale: float,
    dtype_name: str,
    offenders: list[Offender],
    by_class: Counter[str],
    max_offenders: int,
    nan_policy: str,
    shards: tuple[float, ...] = (),
) -> CaseResult:
    name = f"s=max{shards!r}/{dtype_name}" if shards else f"s={scale!r}/{dtype_name}"
    x = population.words.astype(_DTYPES[dtype_name])  # the harness's own copy, never handed out
    labels = [c.value for c in population.classes]
    classes = sorted(set(labels))
    handed = np.array(shards, np.float32) if shards else np.float32(scale)
    answer = _ahead(kernel, x, handed)
    want, nan_in = _expected(x, scale, nan_policy)  # a signal here ends the run unanswered
    try:
        raw, error = answer(), ""
    except KernelFaultError as exc:
        raw, error = None, exc.reason
    nonzero = float(np.mean((want & 0x7F) != 0)) if want.size else 0.0
    if not error:
        try:
            error = _bad_output(raw, x.shape)
        except KernelFaultError as exc:
            raw, error = None, exc.reason
    if "TypeError" in error:  # most often the signature: say what G1 calls
        error = f"{error}; {CONVENTION if not shards else SHARD_CONVENTION}"
    if error or raw is None:
        return CaseResult(name, x.size, len(classes), len(classes), 0, 0, nonzero, error)
    got = np.array(raw, np.uint8, copy=True)  # a plain array: a subclass cannot vouch for itself
    result = compare_codes(got, want, _E4M3FN)
    wrong = result.mismatch | result.nan_code
    failed = 0
    for cls in classes:
        in_class = np.array([lbl == cls for lbl in labels], np.bool_)
        by_class[cls] += int((result.mismatch & in_class).sum())
        failed += bool((wrong & in_class).any())
    for i in np.flatnonzero(wrong)[: max(0, max_offenders - len(offenders))]:
        offenders.append(
            Offender(name, labels[i], int(i), _hex(x, int(i)), f"{got[i]:#04x}", f"{want[i]:#04x}")
        )
    return CaseResult(
        name,
        x.size,
        len(classes),
        failed,
        result.mismatches,
        result.nan_code_mismatches,
        nonzero,
        nan_input_mismatches=int((wrong & nan_in).sum()),
    )


def _verdict(cases: Sequence[CaseResult], nan_policy: str) -> tuple[GateStatus, str]:
    early = screen(cases, vacuous=mostly_zero(cases), what="reference mostly zero")
    if early:
        return early
    # NaN inputs are the only ones a NaN-code disagreement can come from.
    numbers = [c for c in cases if c.mismatches + c.nan_code_mismatches > c.nan_input_mismatches]
    nans = [c for c in cases if c.nan_input_mismatches]
    reasons = [f"byte mismatches in {len(numbers)} of {len(cases)} cases"] if numbers else []
    if nans:
        reasons.append(
            f"NaN inputs break NaN policy {nan_policy!r} in {len(nans)} of {len(cases)} "
            f"cases; if the kernel follows another documented policy, {nan_policy_help()}"
        )
    if reasons or any(c.assertions_failed for c in cases):
        return GateStatus.FAIL, "; ".join(reasons) or "an assertion failed"
    return GateStatus.PASS, ""


def _nan_name(policy: str | NanPolicy) -> str:
    return _parse_nan_policy(policy).name


def run_g1(
    kernel: QuantKernel,
    *,
    scales: Sequence[float] = G1_SCALES,
    input_dtypes: Sequence[str] = G1_INPUT_DTYPES,
    seed: int = G1_SEED,
    max_offenders: int = 8,
    special_words: bool = True,
    shard_scales: Sequence[float] = (),
    nan_policy: str | NanPolicy | None = None,
) -> GateResult:
    """Run G1 on ``kernel``.

    Args:
        kernel: any :class:`QuantKernel`.
        scales: static scales, one case each per input dtype.
        input_dtypes: ``"float32"`` and/or ``"bfloat16"``.
        seed: seed of the population's uniform words.
        max_offenders: how many offending words to keep.
        special_words: include ±NaN and ±inf (False: the seed's population).
        shard_scales: per-shard scales of the shard case, handed to the kernel as one
            float32 array it must collapse (the max); empty, the default: no shard
            case, every call gets one float32 scale (e.g. :data:`G1_SHARD_SCALES`).
        nan_policy: the NaN policy ``kernel`` is held to, resolved by the caller
            (a name or a policy of :data:`fp8lab.specs.nan.NAN_POLICIES`); None:
            the one the kernel declares in its ``nan_policy`` attribute, else canonical.

    Raises:
        ValueError: for an unknown input dtype name, or a NaN policy that is
            not one of the catalogue's.
    """
    nan_policy = declared_nan_policy(kernel) if nan_policy is None else _nan_name(nan_policy)
    unknown = set(input_dtypes) - set(_DTYPES)
    if unknown:
        raise ValueError(f"unknown input dtypes {sorted(unknown)}; use {G1_INPUT_DTYPES}")
    offenders: list[Offender] = []
    by_class: Counter[str] = Counter()
    cases = [
        _run_case(
            kernel,
            g1_population(s, seed=seed, special=special_words),
            s,
            d,
            offenders,
            by_class,
            max_offenders,
            nan_policy,
        )
        for s in scales
        for d in input_dtypes
    ]
    if shard_scales:  # the max taken here, not by collapse_shard_scales (the code under test)
        top = float(max(np.float32(v) for v in shard_scales))
        cases += [
            _run_case(
                kernel,
                g1_population(top, seed=seed, special=special_words),
                top,
                d,
                offenders,
                by_class,
                max_offenders,
                nan_policy,
                tuple(float(v) for v in shard_scales),
            )
            for d in input_dtypes
        ]
    status, reason = _verdict(cases, nan_policy)
    return GateResult.from_cases(
        "G1",
        kernel.name,
        status,
        reason,
        cases,
        mismatches_by_class=dict(sorted(by_class.items())),
        first_offenders=tuple(offenders),
        nan_policy=nan_policy,
    )
