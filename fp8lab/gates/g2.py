"""Gate G2: the CPU kernel against fp8lab's CUDA kernel on a device, byte for byte.

Cases (:mod:`fp8lab.gates.cuda_compare`): the CPU kernel (default the
built-in ``upstream`` port) against the device quant over the G1 population x
G1 scales x input dtypes, then the device e4m3fn encoder against the scan
reference over float32 pattern ranges (default all 2^32), compared on the
device. The encoder is held to the reference on every non-NaN pattern and to
"some NaN code" on NaN patterns; what NaN patterns became (canonical 0x7F,
sign kept, not NaN) is measured and recorded, since PTX leaves the NaN sign
unspecified and the host path drops it.

PASS or FAIL only with a device. Without one the gate is PENDING and the
reason says what is missing: cupy (the import fails), the driver, or a device
(none, or one below sm_89). A CUDA compile error on a present device is a FAIL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fp8lab.cuda.device import CudaDevice, CudaProbe, probe_cuda
from fp8lab.gates.cuda_compare import ALL_PATTERNS, all_encoder_cases, quant_cases, verdict
from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, Offender
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.kernels.protocols import QuantKernel
from fp8lab.populations import G1_SEED

__all__ = ["G2_DEVICE_CHUNK", "G2_ENCODERS", "G2_PATTERNS", "G2_SCOPE", "run_g2"]

G2_PATTERNS: tuple[tuple[int, int], ...] = ALL_PATTERNS
G2_DEVICE_CHUNK = 1 << 28
# PTX leaves a NaN's sign and payload in cvt unspecified: both encoders are held
# to "some NaN code", and the codes NaN patterns became are in ``measured``.
G2_ENCODERS: tuple[tuple[str, str], ...] = (("e4m3fn", "nan-code"), ("e5m2", "nan-code"))
G2_SCOPE = (
    "proves: on this device, the CPU kernel and fp8lab's CUDA source (device build, inline "
    "PTX cvt.rn.satfinite.e4m3x2.f32 as cuda_fp8.hpp emits for sm_89+ under SATFINITE) agree "
    "byte for byte over the G1 population, and the device e4m3fn and e5m2 encoders "
    "(cvt.rn.satfinite.e4m3x2.f32, .e5m2x2.f32) equal the scan reference on every non-NaN "
    "pattern examined and gives a NaN code for every NaN pattern "
    "(the NaN codes it chose are in measured). Does not prove: other devices, drivers or "
    "compilers, or cuda_fp8.hpp's software path on the device (__NV_NOSAT)."
)


def _result(
    kernel: str, status: GateStatus, reason: str, cases: Sequence[CaseResult] = (), **extra: object
) -> GateResult:
    return GateResult.from_cases(
        "G2",
        kernel,
        status,
        reason,
        cases,
        scope=G2_SCOPE,
        **extra,
    )


def run_g2(
    kernel: QuantKernel | None = None,
    *,
    scales: Sequence[float] = G1_SCALES,
    input_dtypes: Sequence[str] = G1_INPUT_DTYPES,
    seed: int = G1_SEED,
    patterns: Sequence[tuple[int, int]] | None = None,
    max_offenders: int = 8,
    probe: Callable[[], CudaProbe] = probe_cuda,
    defines: Sequence[str] = (),
) -> GateResult:
    """Run G2: ``kernel`` (default ``upstream``) against the device build.

    Args:
        kernel: the CPU quant kernel.
        scales: static scales of the quant cases.
        input_dtypes: ``"float32"`` and/or ``"bfloat16"``.
        seed: seed of the G1 population's uniform words.
        patterns: float32 pattern ranges for the encoder cases (None: :data:`G2_PATTERNS`).
        max_offenders: how many offending words to keep.
        probe: finds cupy, the driver and a device (tests substitute it).
        defines: ``-D`` switches for the device build (meta tests plant defects with them).
    """
    cpu = BUILTIN_KERNELS["upstream"] if kernel is None else kernel
    found = probe()
    if found.missing is not None:
        return _result(
            cpu.name, GateStatus.PENDING, f"owed: missing {found.missing}: {found.reason}"
        )
    measured = {"compute_capability": found.compute_capability}
    try:
        device = CudaDevice(found.cupy, defines)
    except Exception as exc:  # noqa: BLE001 - a compile error on a present device is a FAIL
        text = " ".join(str(exc).split())[:300]
        return _result(cpu.name, GateStatus.FAIL, f"CUDA compile error: {text}", measured=measured)
    offenders: list[Offender] = []
    quant = quant_cases(cpu, device, scales, input_dtypes, seed, offenders, max_offenders)
    ranges = G2_PATTERNS if patterns is None else tuple(patterns)
    enc, nan_codes = all_encoder_cases(
        device, G2_ENCODERS, ranges, offenders, max_offenders, G2_DEVICE_CHUNK
    )
    status, reason = verdict(quant, enc)
    return _result(
        cpu.name,
        status,
        reason,
        [*quant, *enc],
        mismatches_by_class={
            "quant": sum(c.mismatches for c in quant),
            "encoder": sum(c.mismatches for c in enc),
        },
        first_offenders=tuple(offenders),
        measured=measured | nan_codes,
    )
