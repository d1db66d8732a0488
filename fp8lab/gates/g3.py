"""Gate G3: a matmul kernel against its order-faithful model and the exact product.

Cases: the seed's four (fp8-facts §3, G3) exactly, then larger shapes; the
1024x1024 ones are opt-in (``large=True``). Two verdicts (assertions) per
case: (1) bitwise against the model the kernel claims (its ``spec``; a
callable claims vllm.cpp's sequential f32 sum with folded alpha); (2) every
output within the seed's tolerance of ``alpha·A·Bᵀ`` (exact, float64 BLAS),
``4·K·FLT_EPSILON·|alpha|·Σ|terms|`` plus ``0.004·|want|`` for bf16. Each
case also reports the worst error over the tight bound gamma_K (derivation in
``fp8lab.gemm.bounds``) and how many times the seed's tolerance exceeds it.
A last case checks that NaN operand codes propagate as the contract says
(:mod:`fp8lab.gates.g3_nan`). Vacuity guards: a case with a zero reference
output fails, and so does a gate that examined no output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.gates.g3_nan import nan_propagation_case
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender
from fp8lab.gemm.bounds import gamma, tight_bound
from fp8lab.gemm.epilogue import BF16
from fp8lab.gemm.matmul_model import model_matmul
from fp8lab.gemm.population import (
    LARGE_CASES,
    LARGER_CASES,
    SEED_CASES,
    G3Case,
    QuantFn,
    g3_operands,
)
from fp8lab.gemm.protocol import VLLM_CPP_SPEC, MatmulKernel, MatmulSpec
from fp8lab.gemm.reference import seed_reference
from fp8lab.gemm.ulp import bits_differ
from fp8lab.kernels import quant_static

__all__ = ["G3CaseStats", "G3Report", "g3_cases", "run_g3", "run_g3_report"]

_OUT_DTYPES = {"f32": np.dtype(np.float32), "bf16": BF16}


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
    """The gate record and the per-case measurements."""

    result: GateResult
    cases: tuple[G3CaseStats, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"result": self.result.to_dict(), "cases": [asdict(c) for c in self.cases]}

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def g3_cases(*, large: bool = False) -> tuple[G3Case, ...]:
    """The seed's four cases, the larger ones, and the 1024x1024 ones if ``large``."""
    return SEED_CASES + LARGER_CASES + (LARGE_CASES if large else ())


def _bad_output(got: object, case: G3Case) -> str:
    want = _OUT_DTYPES[case.out]
    if not isinstance(got, np.ndarray):
        return f"kernel returned {type(got).__name__}, not a numpy array"
    if got.dtype != want or got.shape != (case.m, case.n):
        return f"kernel returned {got.dtype}{got.shape}, want {want}{(case.m, case.n)}"
    return ""


def _hex(x: np.ndarray, i: int) -> str:
    return "0x" + x.reshape(-1)[i : i + 1].tobytes()[::-1].hex()


def _run_case(
    kernel: MatmulKernel, case: G3Case, quant: QuantFn, offenders: list[Offender], keep: int
) -> tuple[CaseResult, G3CaseStats]:
    spec = getattr(kernel, "spec", VLLM_CPP_SPEC)
    spec = spec if isinstance(spec, MatmulSpec) else VLLM_CPP_SPEC
    a, b = g3_operands(case, quant)
    ref = seed_reference(a, b, case.s_in, case.s_w, case.out)
    size = case.m * case.n
    nonzero = float(np.mean(ref.want != 0))
    bf16_out = case.out == "bf16" or spec.bf16_epilogue
    tight = tight_bound(
        ref.abs_sum,
        ref.want,
        ref.alpha,
        case.k,
        bf16_output=bf16_out,
        two_scalar=spec.epilogue == "two_scalar",
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        slack = float(np.min(ref.tolerance / tight))
    stats: dict[str, Any] = dict(
        name=case.name, m=case.m, n=case.n, k=case.k, seed=case.seed, s_in=case.s_in,
        s_w=case.s_w, out=case.out, outputs=size, gamma_k=gamma(case.k),
        seed_over_tight=slack, nonzero_fraction=nonzero,
    )  # fmt: skip
    try:
        got = kernel.matmul(a, b, np.float32(case.s_in), np.float32(case.s_w), case.out)
        error = _bad_output(got, case)
    except Exception as exc:  # noqa: BLE001 - any kernel failure is a verdict
        got, error = None, f"{type(exc).__name__}: {exc}"
    if error or got is None:
        failed = CaseResult(case.name, size, 2, 2, 0, 0, nonzero, error)
        return failed, G3CaseStats(
            **stats, bit_mismatches=0, tolerance_failures=0, worst_ratio_seed=float("nan"),
            worst_ratio_tight=float("nan"), error=error,
        )  # fmt: skip
    model = model_matmul(a, b, case.s_in, case.s_w, case.out, spec)
    differ = bits_differ(got, model).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(got.astype(np.float64) - ref.want).reshape(-1)
        outside = ~(err <= ref.tolerance.reshape(-1))
        ratio_seed = float(np.max(err / ref.tolerance.reshape(-1)))
        ratio_tight = float(np.max(err / tight.reshape(-1)))
    for cls, mask, w in (("bitwise", differ, model), ("tolerance", outside, None)):
        for i in np.flatnonzero(mask)[: max(0, keep - len(offenders))]:
            idx = f"[{int(i) // case.n},{int(i) % case.n}]"
            want = _hex(w, int(i)) if w is not None else repr(float(ref.want.reshape(-1)[i]))
            got_s = _hex(got, int(i)) if w is not None else repr(float(got.reshape(-1)[i]))
            offenders.append(Offender(case.name, cls, int(i), idx, got_s, want))
    bad = int(differ.sum()), int(outside.sum())
    result = CaseResult(
        case.name, size, 2, int(bad[0] > 0) + int(bad[1] > 0), int((differ | outside).sum()), 0,
        nonzero,
    )  # fmt: skip
    return result, G3CaseStats(
        **stats, bit_mismatches=bad[0], tolerance_failures=bad[1],
        worst_ratio_seed=ratio_seed, worst_ratio_tight=ratio_tight,
    )  # fmt: skip


def _verdict(cases: Sequence[CaseResult], stats: Sequence[G3CaseStats]) -> tuple[GateStatus, str]:
    if not stats or not cases or sum(c.words for c in cases) == 0:
        return GateStatus.FAIL, "examined nothing"
    errors = [f"{c.name}: {c.error}" for c in cases if c.error]
    if errors:
        return GateStatus.FAIL, "; ".join(errors[:3])
    vacuous = [c.name for c in cases if c.nonzero_fraction < 1.0]
    if vacuous:
        return GateStatus.FAIL, f"vacuous: a reference output is zero in {', '.join(vacuous)}"
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


def run_g3_report(
    kernel: MatmulKernel,
    *,
    cases: Sequence[G3Case] | None = None,
    large: bool = False,
    quant: QuantFn = quant_static,
    max_offenders: int = 8,
) -> G3Report:
    """Run G3 on ``kernel`` and keep the per-case measurements.

    Args:
        kernel: any :class:`~fp8lab.gemm.protocol.MatmulKernel`.
        cases: the cases (default :func:`g3_cases`).
        large: add the 1024x1024 cases to the default ones.
        quant: the static quant that makes A from x (the kernel's own).
        max_offenders: how many offending outputs to keep.
    """
    chosen = g3_cases(large=large) if cases is None else tuple(cases)
    offenders: list[Offender] = []
    pairs = [_run_case(kernel, c, quant, offenders, max_offenders) for c in chosen]
    results = [p[0] for p in pairs] + [nan_propagation_case(kernel)]
    stats = tuple(p[1] for p in pairs)
    status, reason = _verdict(results, stats)
    by_class = {
        "bitwise": sum(s.bit_mismatches for s in stats),
        "tolerance": sum(s.tolerance_failures for s in stats),
    }
    record = GateResult(
        gate="G3",
        kernel=kernel.name,
        status=status,
        reason=reason,
        cases=len(results),
        assertions=sum(c.assertions for c in results),
        assertions_failed=sum(c.assertions_failed for c in results),
        words=sum(c.words for c in results),
        mismatches=sum(c.mismatches for c in results),
        nan_code_mismatches=0,
        mismatches_by_class=by_class,
        first_offenders=tuple(offenders),
        case_results=tuple(results),
    )
    return G3Report(record, stats)


def run_g3(kernel: MatmulKernel, **options: Any) -> GateResult:
    """Run G3 on ``kernel``; the record only (options as :func:`run_g3_report`)."""
    return run_g3_report(kernel, **options).result
