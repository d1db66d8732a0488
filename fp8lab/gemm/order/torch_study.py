"""torch's rows of the accumulation-order study (torch optional; issue 14).

* ``torch.matmul``: float32 ``A @ Bᵀ`` (:func:`~fp8lab.gemm.order.torch_targets.torch_matmul`),
  probed with :class:`~fp8lab.gemm.order.probe.F32MatmulProbe`;
* ``torch._scaled_mm emulated`` (mkldnn off) and ``torch._scaled_mm oneDNN``
  (torch's own choice), probed on e4m3fn codes with
  :class:`~fp8lab.gemm.order.probe.Fp8MatmulProbe` (scales 1, f32 output).

oneDNN gets one warm-up call per shape before its probes: on this CPU the
first M = 1 call of a process summed differently from every later one
(M, N, K = 1, 16, 32: L(0, 1) = 4 on the first call, 2 after).
Each inferred binary tree is run as a float32 model (:func:`tree_matmul`) on
seeded random fp8 operands and compared with torch bit for bit. Without
torch the study is one row that says so; a probe whose counts fit no tree
is a row naming the error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fp8lab.gemm.order.infer import OrderRecord, infer_order
from fp8lab.gemm.order.probe import F32MatmulProbe, Fp8MatmulProbe, LcaProbe, ProbeError
from fp8lab.gemm.order.run import tree_matmul
from fp8lab.gemm.order.study import NAN_FREE_CODES, OrderRow, _row
from fp8lab.gemm.order.torch_targets import (
    torch_available,
    torch_matmul,
    torch_scaled_mm,
    torch_scaled_mm_onednn,
    torch_threads,
    torch_version,
)
from fp8lab.gemm.protocol import FunctionMatmulKernel, MatmulSpec
from fp8lab.refs.gemm_model import decode_e4m3fn

__all__ = ["NO_TORCH", "torch_order_rows"]

NO_TORCH = "torch is not installed (optional extra [torch]): no torch rows"


def _codes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    codes = rng.integers(0, NAN_FREE_CODES, shape, dtype=np.uint8)
    return codes | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)


def _one(
    target: str,
    probe: LcaProbe,
    run: Callable[[np.ndarray, np.ndarray], np.ndarray],
    shape: tuple[int, int, int],
    rng: np.random.Generator,
    note: str,
) -> tuple[OrderRow, OrderRecord | None]:
    m, n, k = shape
    try:
        rec = infer_order(probe, target)
    except ProbeError as exc:
        return OrderRow(
            target, k, m, n, f"no tree: {exc}", probe.calls, probe.queries, 0.0, note=note
        ), None
    a, b = _codes(rng, (m, k)), _codes(rng, (n, k))
    if rec.tree.max_fan_in() > 2:
        return _row(rec, target), rec
    got = tree_matmul(rec.tree, decode_e4m3fn(a), decode_e4m3fn(b)).view(np.uint32)
    want = np.ascontiguousarray(run(a, b), np.float32).view(np.uint32)
    row = _row(rec, target, got.size, int(np.sum(got == want)))
    return OrderRow(**{**row.__dict__, "note": note}), rec


def torch_order_rows(
    ks: Sequence[int], fp8_ks: Sequence[int], shapes: Sequence[tuple[int, int]], seed: int
) -> tuple[list[OrderRow], list[OrderRecord]]:
    """The trees of torch per (M, N) and K, and the outputs each reproduces bit for bit."""
    if not torch_available():
        return [OrderRow("torch", 0, 0, 0, NO_TORCH, 0, 0, 0.0, note=NO_TORCH)], []
    note = f"torch {torch_version()}, {torch_threads()} threads"
    rng = np.random.default_rng(seed)
    rows, records = [], []

    def f32_run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return torch_matmul(decode_e4m3fn(a), decode_e4m3fn(b))

    for m, n in shapes:
        for k in ks:
            probe = F32MatmulProbe(torch_matmul, k, m=m, n=n)
            row, rec = _one("torch.matmul f32", probe, f32_run, (m, n, k), rng, note)
            rows.append(row)
            records += [rec] if rec else []
    for label, func in (("emulated", torch_scaled_mm), ("oneDNN", torch_scaled_mm_onednn)):
        kernel = FunctionMatmulKernel(f"torch_scaled_mm_{label}", func, MatmulSpec())

        def fp8_run(
            a: np.ndarray, b: np.ndarray, f: Callable[..., np.ndarray] = func
        ) -> np.ndarray:
            return f(a, b, 1.0, 1.0, "f32")

        for m, n in shapes:
            for k in fp8_ks:
                if label == "oneDNN":  # warm-up, not counted
                    fp8_run(np.zeros((m, k), np.uint8), np.zeros((n, k), np.uint8))
                probe8 = Fp8MatmulProbe(kernel, k, m=m, n=n)
                target = f"torch._scaled_mm {label}"
                row, rec = _one(target, probe8, fp8_run, (m, n, k), rng, note)
                rows.append(row)
                records += [rec] if rec else []
    return rows, records
