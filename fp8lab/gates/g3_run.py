"""What G3 records beside its verdicts: a first-call effect, and the library that ran the product.

A kernel may answer its first call in a process differently from every later
one (a library that picks its path, its tiles or its threads on first use).
:func:`first_call_check` calls the kernel ``warmup`` times on the first
case's operands, then once more, and names the outputs where the first and
the last differ; the cases run after it, so the verdict is on the warmed-up
kernel. :func:`kernel_host` is what the kernel's process reported of the
library that ran the product (:mod:`fp8lab.kernels.sources.library_facts`),
or, for a kernel in this process, what it measures here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fp8lab.kernels.matmul_protocol import MatmulKernel
from fp8lab.kernels.sources.library_facts import library_facts
from fp8lab.populations.gemm import G3Case, QuantFn, g3_operands, g3_scales
from fp8lab.runtime.guard import KernelFaultError, call_kernel

__all__ = ["first_call_check", "kernel_host"]


def _matmul(kernel: MatmulKernel, *args: Any) -> Any:
    with np.errstate(all="ignore"):
        return kernel.matmul(*args)


def _bits(got: Any) -> bytes:
    arr = np.ascontiguousarray(np.asarray(got))
    return arr.tobytes() if arr.dtype.kind == "f" else b""


def first_call_check(
    kernel: MatmulKernel, case: G3Case, quant: QuantFn, warmup: int
) -> dict[str, Any]:
    """``warmup`` calls on ``case``'s operands, then one more; where the first and last differ.

    Returns ``{"warmup", "case", "differs"}`` (``differs``: outputs whose bits
    differ), with ``finding`` in words when some do; ``error`` when a call
    raised (the case itself then fails with the reason).
    """
    found: dict[str, Any] = {"warmup": warmup, "case": case.name, "differs": 0}
    try:
        a, b = g3_operands(case, quant)
        s_a, s_b = g3_scales(case)
        first = call_kernel(_matmul, kernel, a, b, s_a, s_b, case.out)
        for _ in range(warmup):
            last = call_kernel(_matmul, kernel, a, b, s_a, s_b, case.out)
    except (KernelFaultError, ValueError) as exc:
        return {**found, "error": str(exc)}
    x, y = _bits(first), _bits(last)
    if len(x) != len(y) or not x:
        return found
    item = np.asarray(first).dtype.itemsize
    kind = {2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    differs = int(np.sum(np.frombuffer(x, kind) != np.frombuffer(y, kind)))
    if differs:
        found["differs"] = differs
        found["finding"] = (
            f"the first call on {case.name} differs from call {warmup + 1} on the same "
            f"inputs at {differs} outputs (the verdict is on the calls after it)"
        )
    return found


def kernel_host(kernel: object) -> dict[str, Any]:
    """The library facts the kernel's own process reported, else this process's for it."""
    reported = getattr(kernel, "host_facts", None)
    if isinstance(reported, dict):
        return reported
    return library_facts(kernel)
