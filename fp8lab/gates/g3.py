"""Gate G3: a matmul kernel against its order-faithful model and the exact product.

Cases: the seed's four (G3) exactly, then larger shapes; the
1024x1024 ones are opt-in (``large=True``). Two verdicts (assertions) per
case: (1) bitwise against the model the kernel claims (its ``spec``; a
callable claims vllm.cpp's sequential f32 sum with folded alpha); (2) every
output within the seed's tolerance of ``alpha·A·Bᵀ`` (exact, float64 BLAS),
``4·K·FLT_EPSILON·|alpha|·Σ|terms|`` plus ``0.004·|want|`` for bf16. Each
case also reports the worst error over the tight bound gamma_K (derivation in
``fp8lab.refs.gemm_bounds``) and how many times the seed's tolerance exceeds it.
A last case checks that NaN operand codes propagate as the contract says
(:mod:`fp8lab.gates.g3_nan`). Vacuity guards: a case with a zero reference
output fails, and so does a gate that examined no output.

The model is :func:`fp8lab.refs.gemm_model.model_output_bits`, which shares no
code with any kernel. Every expectation (model bits, exact reference,
tolerances) is computed before the kernel is called, and the kernel gets
private read-only operands through :func:`fp8lab.runtime.guard.call_kernel`; any
exception or exit it raises is a FAIL of that case with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.gates.g3_memo import remembered_reference
from fp8lab.gates.g3_nan import nan_propagation_case
from fp8lab.gates.g3_run import first_call_check, kernel_host
from fp8lab.gates.g3_spec import (
    declaration_of,
    declared_spec,
    describe_declaration,
    describe_model,
)
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender, screen
from fp8lab.kernels import quant_static
from fp8lab.kernels.matmul_protocol import MatmulKernel, MatmulSpec
from fp8lab.kernels.sources.wire import type_name
from fp8lab.populations.gemm import (
    LARGE_CASES,
    LARGER_CASES,
    SEED_CASES,
    G3Case,
    QuantFn,
    declared_cases,
    g3_operands,
    g3_scales,
)
from fp8lab.refs.gemm_bounds import U_F16, gamma, tight_bound
from fp8lab.refs.gemm_declared import DECLARED_BITS, declared_output_bits
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.format_dtypes import bfloat16_dtype
from fp8lab.specs.gemm_decl import GemmDeclaration

__all__ = ["G3CaseStats", "G3Report", "declared_spec", "g3_cases", "run_g3", "run_g3_report"]


def _out_dtype(out: str) -> np.dtype:
    """A case's output dtype by its name (``f32``, ``bf16``, ``f16``)."""
    if out == "bf16":
        return bfloat16_dtype()
    return np.dtype({"f32": np.float32, "f16": np.float16}[out])


@dataclass(frozen=True)
class G3CaseStats:
    """What one G3 case measured beside its verdicts."""

    name: str
    m: int
    n: int
    k: int
    seed: int
    s_in: float
    s_w: float
    out: str
    outputs: int
    bit_mismatches: int
    tolerance_failures: int
    worst_ratio_seed: float  # max |got - want| / seed tolerance
    worst_ratio_tight: float  # max |got - want| / tight bound
    gamma_k: float
    seed_over_tight: float  # min over outputs of seed tolerance / tight bound
    nonzero_fraction: float
    error: str = ""


@dataclass(frozen=True)
class G3Report:
    """The gate record, the per-case measurements and the model checked against."""

    result: GateResult
    cases: tuple[G3CaseStats, ...]
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "result": self.result.to_dict(),
            "cases": [asdict(c) for c in self.cases],
            "model": self.model,
        }

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def g3_cases(*, large: bool = False) -> tuple[G3Case, ...]:
    """The seed's four cases, the larger ones, and the 1024x1024 ones if ``large``."""
    return SEED_CASES + LARGER_CASES + (LARGE_CASES if large else ())


def _bad_output(got: object, case: G3Case) -> str:
    want = _out_dtype(case.out)
    if not isinstance(got, np.ndarray):
        return f"kernel returned {type_name(got)}, not a numpy array"
    if got.dtype != want or got.shape != (case.m, case.n):
        return f"kernel returned {got.dtype}{got.shape}, want {want}{(case.m, case.n)}"
    return ""


def _hex(bits: np.ndarray, i: int) -> str:
    return f"0x{int(bits[i]):0{2 * bits.dtype.itemsize}x}"


def _matmul(kernel: MatmulKernel, *args: Any) -> Any:
    return kernel.matmul(*args)


def _run_case(
    kernel: MatmulKernel,
    decl: GemmDeclaration,
    case: G3Case,
    quant: QuantFn,
    offenders: list[Offender],
    keep: int,
) -> tuple[CaseResult, G3CaseStats]:
    size = case.m * case.n
    stats: dict[str, Any] = dict(
        name=case.name, m=case.m, n=case.n, k=case.k, seed=case.seed, s_in=case.s_in,
        s_w=case.s_w, out=case.out, outputs=size, gamma_k=gamma(case.k),
    )  # fmt: skip

    def failed(error: str, nonzero: float, slack: float) -> tuple[CaseResult, G3CaseStats]:
        return CaseResult(case.name, size, 2, 2, 0, 0, nonzero, error), G3CaseStats(
            **stats, seed_over_tight=slack, nonzero_fraction=nonzero, bit_mismatches=0,
            tolerance_failures=0, worst_ratio_seed=float("nan"), worst_ratio_tight=float("nan"),
            error=error,
        )  # fmt: skip

    try:
        a, b = g3_operands(case, quant)
    except (KernelFaultError, ValueError) as exc:
        return failed(f"quant: {exc}", 0.0, float("nan"))
    s_a, s_b = g3_scales(case)
    # Every expectation first: the exact reference, the tolerances, the model's bits.
    per_add = decl.output if decl.output_rounding == "per-add" else "float32"
    ref = remembered_reference(a, b, s_a, s_b, case.out, per_add)
    nonzero = float(np.mean(ref.want != 0))
    narrow = "float16" in (decl.output, {"f16": "float16"}.get(case.out))
    tight = tight_bound(
        ref.abs_sum,
        ref.want,
        ref.alpha,
        case.k,
        bf16_output=case.out == "bf16" or decl.output == "bfloat16",
        two_scalar=decl.scales != "folded",
        output_u=U_F16 if narrow else None,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        slack = float(np.min(ref.tolerance / tight))
    try:
        model = declared_output_bits(a, b, s_a, s_b, case.out, decl).reshape(-1)
    except ValueError as exc:  # the declared model has nothing for this case (no tree)
        return failed(f"model: {exc}", nonzero, slack)
    try:
        got = call_kernel(_matmul, kernel, a, b, s_a, s_b, case.out)
        error = _bad_output(got, case)
    except KernelFaultError as exc:
        got, error = None, exc.reason
    if error or got is None:
        return failed(error, nonzero, slack)
    got_bits = np.ascontiguousarray(got).view(DECLARED_BITS[case.out]).reshape(-1)
    differ = got_bits != model
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(got.astype(np.float64) - ref.want).reshape(-1)
        outside = ~(err <= ref.tolerance.reshape(-1))
        ratio_seed = float(np.max(err / ref.tolerance.reshape(-1)))
        ratio_tight = float(np.max(err / tight.reshape(-1)))
    for cls, mask in (("bitwise", differ), ("tolerance", outside)):
        for i in np.flatnonzero(mask)[: max(0, keep - len(offenders))]:
            where = f"out[{int(i) // case.n},{int(i) % case.n}]"
            if cls == "bitwise":
                want, got_s = _hex(model, int(i)), _hex(got_bits, int(i))
            else:
                want, got_s = repr(float(ref.want.reshape(-1)[i])), repr(float(got.reshape(-1)[i]))
            offenders.append(Offender(case.name, cls, int(i), where, got_s, want))
    bad = int(differ.sum()), int(outside.sum())
    result = CaseResult(
        case.name, size, 2, int(bad[0] > 0) + int(bad[1] > 0), int((differ | outside).sum()), 0,
        nonzero,
    )  # fmt: skip
    return result, G3CaseStats(
        **stats, seed_over_tight=slack, nonzero_fraction=nonzero, bit_mismatches=bad[0],
        tolerance_failures=bad[1], worst_ratio_seed=ratio_seed, worst_ratio_tight=ratio_tight,
    )  # fmt: skip


def _verdict(cases: Sequence[CaseResult], stats: Sequence[G3CaseStats]) -> tuple[GateStatus, str]:
    if not stats:
        return GateStatus.FAIL, "examined nothing"
    zero = [c.name for c in cases if c.nonzero_fraction < 1.0]
    early = screen(cases, vacuous=zero, what="a reference output is zero")
    if early:
        return early
    worst = (
        f"worst |err|/tolerance {max(s.worst_ratio_seed for s in stats):.3g}, "
        f"|err|/gamma_K bound {max(s.worst_ratio_tight for s in stats):.3g}, "
        f"seed tolerance >= {min(s.seed_over_tight for s in stats):.3g}x gamma_K bound"
    )
    bits = [s.name for s in stats if s.bit_mismatches]
    tol = [s.name for s in stats if s.tolerance_failures]
    if bits or tol:
        return GateStatus.FAIL, (
            f"bitwise mismatches in {len(bits)}, outside tolerance in {len(tol)} "
            f"of {len(cases)} cases; {worst}"
        )
    other = [c.name for c in cases if c.assertions_failed]
    if other:
        return GateStatus.FAIL, f"failed assertions in {', '.join(other)}; {worst}"
    return GateStatus.PASS, worst


def _record(kernel: str, status: GateStatus, reason: str, **counts: Any) -> GateResult:
    base: dict[str, Any] = dict(
        cases=0, assertions=0, assertions_failed=0, words=0, mismatches=0, nan_code_mismatches=0
    )
    return GateResult(gate="G3", kernel=kernel, status=status, reason=reason, **(base | counts))


def run_g3_report(
    kernel: MatmulKernel,
    *,
    cases: Sequence[G3Case] | None = None,
    large: bool = False,
    quant: QuantFn = quant_static,
    max_offenders: int = 8,
    declaration: GemmDeclaration | None = None,
    warmup: int = 1,
    spec: MatmulSpec | None = None,
) -> G3Report:
    """Run G3 on ``kernel`` and keep the per-case measurements.

    Args:
        kernel: any :class:`~fp8lab.kernels.matmul_protocol.MatmulKernel`; its ``spec``
            (see :func:`declared_spec`) picks the model of the bitwise verdict.
        cases: the cases (default :func:`g3_cases`, as the declaration takes them).
        large: add the 1024x1024 cases to the default ones.
        quant: the static quant that makes A from x (the kernel's own).
        max_offenders: how many offending outputs to keep.
        declaration: the :class:`~fp8lab.specs.gemm_decl.GemmDeclaration` to check
            the kernel against instead of its ``spec``: its scales, out dtypes,
            shapes and K and N multiples pick the cases, and K and N of any size
            add a 5x13x1000 case.
        warmup: calls on the first case's operands before it runs; when the
            first call's outputs differ from the case's, the record's
            ``measured["first_call"]`` says so.
        spec: the model to check against instead of the kernel's own ``spec``
            (a kernel in another process: its model as its source text states
            it). A model the kernel's process claims (``claimed_spec``) is
            recorded in ``measured["claimed_model"]``, never checked against.
    """
    name = str(getattr(kernel, "name", type(kernel).__name__))
    try:
        if declaration is None:
            held = declared_spec(kernel if spec is None else _Holding(spec))
            decl, model = declaration_of(held), describe_model(held)
        else:
            decl, model = declaration, describe_declaration(declaration)
    except ValueError as exc:
        return G3Report(_record(name, GateStatus.FAIL, str(exc)), ())
    chosen = g3_cases(large=large) if cases is None else tuple(cases)
    if declaration is not None or decl.scales == "none" or decl.outputs != ("f32", "bf16"):
        chosen = declared_cases(decl, chosen, odd=declaration is not None and cases is None)
    first = first_call_check(kernel, chosen[0], quant, warmup) if chosen and warmup > 0 else {}
    offenders: list[Offender] = []
    pairs = [_run_case(kernel, decl, c, quant, offenders, max_offenders) for c in chosen]
    results = [p[0] for p in pairs] + [nan_propagation_case(kernel, decl)]
    stats = tuple(p[1] for p in pairs)
    status, reason = _verdict(results, stats)
    by_class = {
        "bitwise": sum(s.bit_mismatches for s in stats),
        "tolerance": sum(s.tolerance_failures for s in stats),
    }
    if first.get("differs"):
        reason += f"; first-call effect: {first['finding']}"
    record = _record(
        name,
        status,
        f"{reason}; model: {model}",
        cases=len(results),
        assertions=sum(c.assertions for c in results),
        assertions_failed=sum(c.assertions_failed for c in results),
        words=sum(c.words for c in results),
        mismatches=sum(c.mismatches for c in results),
        mismatches_by_class=by_class,
        first_offenders=tuple(offenders),
        case_results=tuple(results),
        measured={
            "host": kernel_host(kernel),
            "first_call": first,
            "declaration": decl.name,
            **_claimed(kernel),
        },
    )
    return G3Report(record, stats, model)


@dataclass(frozen=True)
class _Holding:
    """What :func:`declared_spec` reads a model from: a ``spec`` given from outside the kernel."""

    spec: Any


def _claimed(kernel: object) -> dict[str, str]:
    """The model a kernel's own process claims, described (recorded, never checked against)."""
    claimed = getattr(kernel, "claimed_spec", None)
    if claimed is None:
        return {}
    try:
        return {"claimed_model": describe_model(declared_spec(_Holding(claimed)))}
    except ValueError as exc:
        return {"claimed_model": str(exc)[:200]}


def run_g3(kernel: MatmulKernel, **options: Any) -> GateResult:
    """Run G3 on ``kernel``; the record only (options as :func:`run_g3_report`)."""
    return run_g3_report(kernel, **options).result
