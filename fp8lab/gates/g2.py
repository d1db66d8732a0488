"""Gate G2: CPU quant against the CUDA quant, byte for byte on identical input.

It needs a CUDA device and a CUDA backend of the kernel; fp8lab has no CUDA
backend yet, so G2 is PENDING: owed, never shown as PASS and never skipped.
"""

from __future__ import annotations

from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.kernels.protocol import QuantKernel

__all__ = ["run_g2"]


def run_g2(kernel: QuantKernel) -> GateResult:
    """Report G2 as PENDING with the reason; it examines nothing and claims nothing."""
    return GateResult(
        gate="G2",
        kernel=kernel.name,
        status=GateStatus.PENDING,
        reason="owed: needs a CUDA device and fp8lab's CUDA backend, neither present here",
        cases=0,
        assertions=0,
        assertions_failed=0,
        words=0,
        mismatches=0,
        nan_code_mismatches=0,
    )
