"""torch's rows of the accumulation-order study (torch optional).

* ``torch.matmul``: float32 ``A @ Bᵀ`` (:func:`~fp8lab.kernels.sources.torch.torch_matmul`),
  probed with :class:`~fp8lab.order.probe.F32MatmulProbe`;
* ``torch._scaled_mm emulated`` (mkldnn off) and ``torch._scaled_mm oneDNN``
  (torch's own choice), probed on e4m3fn codes with
  :class:`~fp8lab.order.probe.Fp8MatmulProbe` (scales 1, f32 output).

oneDNN gets one warm-up call per shape before its probes: on this CPU the
first M = 1 call of a process summed differently from every later one
(M, N, K = 1, 16, 32: L(0, 1) = 4 on the first call, 2 after).
Every output's tree is inferred and equal trees grouped into classes
(:func:`~fp8lab.order.per_position.infer_positions`); each class is run
as a float32 model on seeded random fp8 operands and compared with torch bit
for bit. Each row names torch's version and thread count. Without torch the
study is one row that says so; outputs whose counts fit no tree make the
row's verdict ``not-fixed``, with the error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
from fp8lab.kernels.sources.torch import (
    torch_available,
    torch_matmul,
    torch_scaled_mm,
    torch_scaled_mm_onednn,
    torch_threads,
    torch_version,
)
from fp8lab.order.host import host_facts
from fp8lab.order.per_position import PositionsRecord, infer_positions
from fp8lab.order.probe import F32MatmulProbe, Fp8MatmulProbe
from fp8lab.runtime.extras import install_line
from fp8lab.studies.order import OrderRow, library_row

__all__ = ["NO_TORCH", "torch_order_rows"]

NO_TORCH = f"no torch rows: torch is absent: {install_line('torch')}"


def torch_order_rows(
    ks: Sequence[int], fp8_ks: Sequence[int], shapes: Sequence[tuple[int, int]], seed: int
) -> tuple[list[OrderRow], list[PositionsRecord]]:
    """The trees of torch per (M, N) and K, every output, and what they reproduce."""
    if not torch_available():
        return [OrderRow("torch", 0, 0, 0, NO_TORCH, 0, 0, 0.0, note=NO_TORCH)], []
    threads = torch_threads()
    host = {**host_facts(), "torch": torch_version(), "torch_threads": threads}
    columns: dict[str, Any] = {
        "blas": f"torch {torch_version()}",
        "core_type": "torch's own",
        "threads": threads,
    }
    rows, records = [], []

    def add(target: str, probe: F32MatmulProbe | Fp8MatmulProbe, k: int) -> None:
        m, n = probe.m, probe.n
        rec = infer_positions(probe, f"{target} {m}x{n}", seed=seed + k, host=host)
        rows.append(library_row(rec, target, **columns))
        records.append(rec)

    for m, n in shapes:
        for k in ks:
            add("torch.matmul f32", F32MatmulProbe(torch_matmul, k, m=m, n=n), k)
    for label, func in (("emulated", torch_scaled_mm), ("oneDNN", torch_scaled_mm_onednn)):
        kernel = FunctionMatmulKernel(f"torch_scaled_mm_{label}", func, MatmulSpec())
        for m, n in shapes:
            for k in fp8_ks:
                if label == "oneDNN":  # warm-up, not counted
                    func(np.zeros((m, k), np.uint8), np.zeros((n, k), np.uint8), 1.0, 1.0, "f32")
                add(f"torch._scaled_mm {label}", Fp8MatmulProbe(kernel, k, m=m, n=n), k)
    return rows, records
