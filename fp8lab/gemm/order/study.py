"""The accumulation-order study behind the ``accumulation_order`` notebook.

* :func:`model_order_rows`: infer every fp8lab accumulator model's tree at
  each K and name its family (batched f32 probes).
* :func:`numpy_order_rows`: infer numpy's float32 matmul tree per shape, then
  run it as a model on seeded random fp8 operands and count the outputs
  that equal numpy's bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fp8lab.gemm.order.infer import OrderRecord, infer_order
from fp8lab.gemm.order.probe import F32MatmulProbe
from fp8lab.gemm.order.run import tree_matmul
from fp8lab.gemm.order.targets import numpy_matmul
from fp8lab.refs.gemm_accumulators import MODELS, AccumulatorModel
from fp8lab.refs.gemm_model import decode_e4m3fn

__all__ = ["OrderRow", "model_order_rows", "numpy_order_rows"]

NAN_FREE_CODES = 0x7F  # draw codes below 0x7F and give them a random sign: no NaN


@dataclass(frozen=True)
class OrderRow:
    """One inferred order: what, at which K and shape, its family and its cost."""

    target: str
    k: int
    m: int
    n: int
    family: str
    calls: int
    queries: int
    seconds: float
    outputs_checked: int = 0
    outputs_equal: int = 0
    note: str = ""


def _row(rec: OrderRecord, target: str, checked: int = 0, equal: int = 0) -> OrderRow:
    m, n = rec.shape
    family = rec.family or "no known family"
    return OrderRow(
        target, rec.k, m, n, family, rec.calls, rec.queries, rec.seconds, checked, equal
    )


def model_order_rows(
    ks: Sequence[int], models: dict[str, AccumulatorModel] | None = None, rows: int = 32
) -> list[OrderRow]:
    """Every model's inferred family at each K (``rows`` questions per call)."""
    chosen = MODELS if models is None else models
    return [
        _row(infer_order(F32MatmulProbe(model, k, m=rows, batch=True), name), name)
        for name, model in chosen.items()
        for k in ks
    ]


def _fp8(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    codes = rng.integers(0, NAN_FREE_CODES, shape, dtype=np.uint8)
    signs = rng.integers(0, 2, shape, dtype=np.uint8) << 7
    return decode_e4m3fn(codes | signs)


def numpy_order_rows(
    ks: Sequence[int], shapes: Sequence[tuple[int, int]], seed: int
) -> tuple[list[OrderRow], list[OrderRecord]]:
    """The tree of numpy's matmul per (M, N) and K, and the outputs it reproduces bit for bit."""
    rows, records = [], []
    rng = np.random.default_rng(seed)
    for m, n in shapes:
        for k in ks:
            rec = infer_order(F32MatmulProbe(numpy_matmul, k, m=m, n=n), f"numpy {m}x{n}")
            a, b = _fp8(rng, (m, k)), _fp8(rng, (n, k))
            got = tree_matmul(rec.tree, a, b).view(np.uint32)
            want = numpy_matmul(a, b).view(np.uint32)
            rows.append(_row(rec, "numpy.matmul", got.size, int(np.sum(got == want))))
            records.append(rec)
    return rows, records
