"""Gate G2h: the CPU kernel against fp8lab's CUDA source compiled for the host, byte for byte.

It runs everywhere (CI included): the CUDA C source of :mod:`fp8lab.cuda` is
built by g++ against the CUDA headers from PyPI (``cuda-host``). Cases: the
CPU kernel (default the built-in ``upstream`` port) against the cuda-host
quant over the G1 population x G1 scales x input dtypes, then the cuda-host
e4m3fn encoder against the scan reference over float32 pattern ranges
(default all 2^32), NaN codes exact (:mod:`fp8lab.gates.cuda_compare`).

What it proves and what it does not is :data:`G2H_SCOPE`, carried in the
record. Without g++ or the headers it is PENDING
with the reason; a compile error is a FAIL.
"""

from __future__ import annotations

from collections.abc import Sequence

from fp8lab.cuda.host_build import CudaHostBuildError
from fp8lab.cuda.host_kernel import cuda_host_encoder, cuda_host_kernel
from fp8lab.gates.cuda_compare import ALL_PATTERNS, all_encoder_cases, quant_cases, verdict
from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.kernels.protocols import QuantKernel
from fp8lab.populations import G1_SEED

__all__ = ["G2H_BOUNDARY_PATTERNS", "G2H_ENCODERS", "G2H_PATTERNS", "G2H_SCOPE", "run_g2h"]

G2H_PATTERNS: tuple[tuple[int, int], ...] = ALL_PATTERNS
# A quick sample (about 2^25 patterns of each sign): around 1.0, e4m3fn's subnormals
# and its 2^-10 underflow tie, the 448/464 top, e5m2's 2^-17 underflow tie and its
# 57344/61440 top, and inf into the NaNs.
G2H_BOUNDARY_PATTERNS: tuple[tuple[int, int], ...] = tuple(
    (sign | lo, sign | hi)
    for sign in (0, 0x8000_0000)
    for lo, hi in (
        (0x3F00_0000, 0x3F80_0000 + (1 << 20)),
        (0x3A00_0000, 0x3C90_0000),
        (0x43D0_0000, 0x43F0_0000),
        (0x36F0_0000, 0x3790_0000),
        (0x4750_0000, 0x4790_0000),
        (0x7F7F_0000, 0x7F81_0000),
    )
)
# The header's host path turns every NaN into its +NaN first; for e4m3fn that
# gives fp8lab's canonical 0x7F, for e5m2 0x7F where fp8lab's canonical is 0x7E.
# So e4m3fn NaNs are held to the exact code, e5m2 NaNs to "some NaN code" and
# the codes they became are in ``measured`` under "e5m2 nan->...".
G2H_ENCODERS: tuple[tuple[str, str], ...] = (("e4m3fn", "exact"), ("e5m2", "nan-code"))
G2H_SCOPE = (
    "proves: the CPU kernel and fp8lab's CUDA C source agree byte for byte when the source "
    "is compiled for the host, where __nv_cvt_float_to_fp8 takes cuda_fp8.hpp's software "
    "path (a NaN is first canonicalised to +NaN, so -NaN gives 0x7F; then "
    "__nv_cvt_double_to_fp8), and that this path's e4m3fn and e5m2 SATFINITE encoders "
    "equal the scan reference on the patterns examined (e5m2 NaNs: some NaN code; the "
    "header gives 0x7F, fp8lab's canonical is 0x7E). Does not prove: the sm_89+ device instruction "
    "cvt.rn.satfinite.e4m3x2.f32 that the device build uses under SATFINITE (gate G2)."
)


def _result(kernel: str, status: GateStatus, reason: str, **fields: object) -> GateResult:
    cases: Sequence[CaseResult] = fields.pop("case_results", ())  # type: ignore[assignment]
    return GateResult.from_cases(
        "G2h",
        kernel,
        status,
        reason,
        cases,
        scope=G2H_SCOPE,
        **fields,
    )


def run_g2h(
    kernel: QuantKernel | None = None,
    *,
    scales: Sequence[float] = G1_SCALES,
    input_dtypes: Sequence[str] = G1_INPUT_DTYPES,
    seed: int = G1_SEED,
    patterns: Sequence[tuple[int, int]] | None = None,
    max_offenders: int = 8,
    defines: Sequence[str] = (),
) -> GateResult:
    """Run G2h: ``kernel`` (default ``upstream``) against the cuda-host build.

    Args:
        kernel: the CPU quant kernel.
        scales: static scales of the quant cases.
        input_dtypes: ``"float32"`` and/or ``"bfloat16"``.
        seed: seed of the G1 population's uniform words.
        patterns: float32 pattern ranges for the encoder cases (None: :data:`G2H_PATTERNS`).
        max_offenders: how many offending words to keep.
        defines: ``-D`` switches for the host build (meta tests plant defects with them).
    """
    cpu = BUILTIN_KERNELS["upstream"] if kernel is None else kernel
    try:
        cuda = cuda_host_kernel(defines)
        encoder = cuda_host_encoder(defines)
    except CudaHostBuildError as exc:
        status = GateStatus.PENDING if exc.missing else GateStatus.FAIL
        return _result(cpu.name, status, str(exc))
    offenders: list[Offender] = []
    quant = quant_cases(cpu, cuda, scales, input_dtypes, seed, offenders, max_offenders)
    ranges = G2H_PATTERNS if patterns is None else tuple(patterns)
    enc, measured = all_encoder_cases(encoder, G2H_ENCODERS, ranges, offenders, max_offenders)
    status, reason = verdict(quant, enc)
    by_kind = {
        "quant": sum(c.mismatches for c in quant),
        "encoder": sum(c.mismatches + c.nan_code_mismatches for c in enc),
    }
    return _result(
        cpu.name,
        status,
        reason,
        case_results=[*quant, *enc],
        mismatches_by_class=by_kind,
        first_offenders=tuple(offenders),
        measured=measured,
    )
