"""Gate GF: a fused-chain kernel against its declared recipe, bitwise, step by step.

Kernel signatures (docs/gates/gf.md), all arrays bf16 except the codes:

* rmsnorm: ``FUNC(x, residual_or_None, weight, scale, eps) -> (codes, residual_out_or_None)``
* rmsnorm-gated: ``FUNC(x, residual_or_None, weight, gate, scale, eps)``, returning as rmsnorm
* silu-mul: ``FUNC(x_gate_up, scale) -> codes`` (gate is the first half of the last axis)

Per case (a scale, and for rmsnorm with and without a residual) GF asserts:
the e4m3fn codes equal the recipe's reference byte for byte; the residual
output equals the reference's bf16 sum (when a residual is given); and, for a
kernel that exposes ``trace(...)`` (same arguments, step name -> values), each
exposed step's output equals the reference's, bitwise as float32 (any NaN
equals any NaN), so a failure is localised to its first wrong step. It also
counts the bytes in which the recipe's reference differs from vllm.cpp's
standalone sequence (``measured["standalone_bytes_differ"]``; a measurement,
not a verdict). The references are computed before the kernel is called, the
kernel gets private read-only copies (``fp8lab.runtime.guard``), and a kernel that
raises or returns the wrong type fails its case. FAIL on nothing examined, and
on a case whose reference codes are mostly zero in magnitude.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from fp8lab.gates.compare import as_codes
from fp8lab.gates.records import (
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    mostly_zero,
    screen,
)
from fp8lab.kernels.sources.wire import type_name
from fp8lab.populations.chains import CHAIN_SCALES, CHAIN_SEED, ChainCase, chain_population
from fp8lab.refs.chain_ref import reference_chain
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.chain_catalogue import RECIPES, standalone_for
from fp8lab.specs.chain_recipe import CHAINS
from fp8lab.specs.formats import FORMATS

__all__ = ["GF_CHAINS", "kernel_args", "run_gf"]

_E4M3FN = FORMATS["e4m3fn"]  # the chains' codes

GF_CHAINS = CHAINS


def kernel_args(chain: str, inputs: dict[str, Any]) -> tuple[Any, ...]:
    """The positional arguments GF hands a ``chain`` kernel."""
    if chain == "rmsnorm":
        return (inputs["x"], inputs["residual"], inputs["weight"], inputs["scale"], inputs["eps"])
    if chain == "rmsnorm-gated":
        return (inputs["x"], None, inputs["weight"], inputs["gate"], inputs["scale"], inputs["eps"])
    return (inputs["x_gate_up"], inputs["scale"])


def _split(chain: str, got: Any) -> tuple[Any, Any]:
    if chain == "silu-mul":
        return got, None
    if not isinstance(got, tuple) or len(got) != 2:
        raise TypeError(f"kernel returned {type_name(got)}, not (codes, residual_out)")
    return got


def _bad_codes(codes: Any, shape: tuple[int, ...]) -> str:
    if not isinstance(codes, np.ndarray):
        return f"kernel returned {type_name(codes)} codes, not a numpy array"
    if codes.dtype != np.uint8 or codes.shape != shape:
        return f"kernel returned codes {codes.dtype}{codes.shape}, want uint8{shape}"
    return ""


def _bad_residual(res: Any, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str:
    """Why ``res`` is not ``residual_out`` as the convention says: ``dtype`` (x's), ``shape``."""
    if isinstance(res, np.ndarray) and res.dtype == dtype and res.shape == shape:
        return ""
    is_array = isinstance(res, np.ndarray)
    got = f"{res.dtype.name} {list(res.shape)}" if is_array else type_name(res)
    return f"residual_out: expected {dtype.name} {list(shape)}, got {got}"


def _bits(values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float32)
    arr = np.asarray(arr, np.float32)
    return np.where(np.isnan(arr), np.float32(np.nan), arr).view(np.uint32)


def _mismatch(got: Any, want: np.ndarray) -> np.ndarray:
    """Where ``got`` differs from ``want`` bitwise; everywhere if not numbers of its shape."""
    try:
        g = _bits(got)
    except (TypeError, ValueError):
        return np.ones(want.shape, np.bool_)
    if g.shape != want.shape:
        return np.ones(want.shape, np.bool_)
    return np.asarray(g != _bits(want))


class _Case:
    """One case's run: counts, offenders and the first failing step."""

    def __init__(self, kernel: Any, chain: str, recipe: str, case: ChainCase) -> None:
        self.kernel, self.chain, self.case = kernel, chain, case
        self.want = reference_chain(RECIPES[recipe], case.inputs)
        other = reference_chain(RECIPES[standalone_for(recipe)], case.inputs)["quant"]
        self.standalone_diff = int((other != self.want["quant"]).sum())
        self.failed_steps: list[str] = []
        self.checked_steps: list[str] = []
        self.offenders: list[Offender] = []
        self.residual_words = self.residual_mismatches = 0

    def _offend(self, what: str, wrong: np.ndarray, got: Any, want: Any, limit: int) -> None:
        cols = wrong.shape[-1] if wrong.ndim else 1
        for i in np.flatnonzero(wrong)[: max(0, limit - len(self.offenders))]:
            r, c = divmod(int(i), cols)
            label = self.case.labels[r] if r < len(self.case.labels) else "-"
            flat = np.asarray(got, dtype=object).reshape(-1)
            g = flat[i] if i < flat.size else "-"
            w = np.asarray(want).reshape(-1)[i]
            self.offenders.append(
                Offender(self.case.name, f"{what}/{label}", int(i), f"out[{r},{c}]", str(g), str(w))
            )

    def run(self, limit: int) -> CaseResult:
        args = kernel_args(self.chain, self.case.inputs)
        want = self.want["quant"]
        nonzero = float(np.mean((want & 0x7F) != 0)) if want.size else 0.0
        try:
            codes, res = _split(self.chain, call_kernel(self.kernel, *args))
            codes = as_codes(codes, _E4M3FN)
            error = _bad_codes(codes, want.shape)
            if not error and "residual_out" in self.want:
                x = self.case.inputs["x"]
                error = _bad_residual(res, x.dtype, self.want["residual_out"].shape)
        except (KernelFaultError, TypeError, ValueError) as exc:
            codes, res, error = None, None, getattr(exc, "reason", str(exc))
        asserts = 1 + ("residual_out" in self.want)
        if error:
            return CaseResult(self.case.name, want.size, asserts, asserts, 0, 0, nonzero, error)
        got = np.array(codes, np.uint8, copy=True)
        wrong = got != want
        failed = int(wrong.any())
        if "residual_out" in self.want:
            bad = _mismatch(res, self.want["residual_out"]) if res is not None else wrong | True
            self.residual_words += bad.size
            self.residual_mismatches += int(bad.sum())
            failed += int(bad.any())
        self._offend("quant", wrong, got, want, limit)
        asserts += self._prefixes(args, limit)
        failed += len(self.failed_steps)
        return CaseResult(self.case.name, want.size, asserts, failed, int(wrong.sum()), 0, nonzero)

    def _prefixes(self, args: tuple[Any, ...], limit: int) -> int:
        trace = getattr(self.kernel, "trace", None)
        if not callable(trace):
            return 0
        try:
            steps = call_kernel(trace, *args)
        except KernelFaultError as exc:
            self.failed_steps.append(f"trace: {exc.reason}")
            return 1
        if not isinstance(steps, dict):
            self.failed_steps.append("trace: not a dict")
            return 1
        for name, ref in self.want.items():
            if name in ("quant", "residual_out") or name not in steps:
                continue
            self.checked_steps.append(name)
            bad = _mismatch(steps[name], ref)
            if bad.any():
                self.failed_steps.append(name)
                self._offend(f"step {name}", bad, steps[name], ref, limit)
        return len(self.checked_steps)


def _verdict(cases: list[CaseResult]) -> tuple[GateStatus, str]:
    early = screen(cases, vacuous=mostly_zero(cases), what="reference mostly zero")
    if early:
        return early
    bad = [c.name for c in cases if c.assertions_failed]
    if bad:
        return GateStatus.FAIL, f"assertions failed in {len(bad)} of {len(cases)} cases"
    return GateStatus.PASS, ""


def run_gf(
    kernel: Any,
    *,
    chain: str,
    recipe: str,
    seed: int = CHAIN_SEED,
    scales: tuple[float, ...] = CHAIN_SCALES,
    max_offenders: int = 8,
) -> GateResult:
    """Run GF on ``kernel``, which claims to compute ``recipe`` (a ``chain`` recipe).

    Raises:
        ValueError: for an unknown chain or recipe, or a recipe of another chain.
    """
    if chain not in GF_CHAINS:
        raise ValueError(f"unknown chain {chain!r}; choose from {', '.join(GF_CHAINS)}")
    names = [n for n, c in RECIPES.items() if c.chain == chain]
    if recipe not in names:
        raise ValueError(f"unknown {chain} recipe {recipe!r}; choose from {', '.join(names)}")
    runs = [
        _Case(kernel, chain, recipe, c) for c in chain_population(chain, seed=seed, scales=scales)
    ]
    cases = [r.run(max_offenders) for r in runs]
    offenders = [o for r in runs for o in r.offenders][:max_offenders]
    by_class: Counter[str] = Counter(o.word_class for r in runs for o in r.offenders)
    status, reason = _verdict(cases)
    failing = next((s for r in runs for s in r.failed_steps), None)
    if failing and status is GateStatus.FAIL:
        reason += f"; first failing step: {failing}"
    name = getattr(kernel, "name", None) or getattr(kernel, "__name__", type(kernel).__name__)
    return GateResult.from_cases(
        "GF",
        str(name),
        status,
        reason,
        cases,
        mismatches_by_class=dict(sorted(by_class.items())),
        first_offenders=tuple(offenders),
        measured={
            "chain": chain,
            "recipe": recipe,
            "standalone_recipe": standalone_for(recipe),
            "standalone_bytes_differ": sum(r.standalone_diff for r in runs),
            "prefix_steps_checked": sorted({s for r in runs for s in r.checked_steps}),
            "first_failing_step": failing,
            "residual_words": sum(r.residual_words for r in runs),
            "residual_mismatches": sum(r.residual_mismatches for r in runs),
        },
    )
