"""The accumulation-order study behind the ``accumulation_order`` notebook.

* :func:`model_order_rows`: infer every fp8lab accumulator model's tree at
  each K and name its family (batched f32 probes).
* :func:`numpy_order_rows`: infer the tree of every output of numpy's
  float32 matmul per shape and K, group equal trees into classes, then run
  each class as a model on seeded random fp8 operands and count the outputs
  that equal numpy's bit for bit (:func:`~fp8lab.order.per_position.infer_positions`).

Every row names the host facts the order depends on (CPU, BLAS and its
version, core type, threads): a library's order is a fact of this host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fp8lab.order.host import host_facts
from fp8lab.order.infer import OrderRecord, infer_order
from fp8lab.order.per_position import PositionsRecord, infer_positions
from fp8lab.order.probe import F32MatmulProbe
from fp8lab.order.targets import numpy_matmul
from fp8lab.refs.gemm_accumulators import MODELS, AccumulatorModel

__all__ = ["OrderRow", "library_row", "model_order_rows", "numpy_order_rows"]


@dataclass(frozen=True)
class OrderRow:
    """One inferred order: what, at which K and shape, its family, its cost, its check, its host.

    ``family`` is the one family of every output, or one ``where: family`` part
    per class; ``verdict`` is the check's (``reproduced``, ``not-fixed``,
    ``not-checked``; empty for fp8lab's own models, which the tests check).
    """

    target: str
    k: int
    m: int
    n: int
    family: str
    calls: int
    queries: int
    seconds: float
    classes: int = 1
    outputs_checked: int = 0
    outputs_reproduced: int = 0
    verdict: str = ""
    cpu: str = ""
    blas: str = ""
    core_type: str = ""
    threads: int = 0
    note: str = ""


def _host_columns(host: dict[str, Any]) -> dict[str, Any]:
    blas = host.get("blas", {})
    return {
        "cpu": str(host.get("cpu", "")),
        "blas": f"{blas.get('library')} {blas.get('version')}",
        "core_type": str(blas.get("core_type") or "not reported"),
        "threads": int(blas.get("threads") or 0),
    }


def _row(rec: OrderRecord, target: str, host: dict[str, Any]) -> OrderRow:
    m, n = rec.shape
    family = rec.family or "no known family"
    return OrderRow(
        target, rec.k, m, n, family, rec.calls, rec.queries, rec.seconds, **_host_columns(host)
    )


def library_row(rec: PositionsRecord, target: str, note: str = "", **host: Any) -> OrderRow:
    """The row of one per-position inference (``host``: columns that override the record's)."""
    m, n = rec.shape
    one = rec.uniform
    if one is not None and one.tree is not None:
        family = one.family or "no known family"
    else:
        family = "; ".join(
            f"{c.where()}: {c.family or ('no tree' if c.tree is None else 'no known family')}"
            for c in rec.classes
        )
    return OrderRow(
        target,
        rec.k,
        m,
        n,
        family,
        rec.calls,
        rec.calls * m * n,
        rec.seconds,
        classes=len(rec.classes),
        outputs_checked=rec.outputs_checked,
        outputs_reproduced=rec.outputs_reproduced,
        verdict=rec.verdict,
        note=note or "; ".join(rec.evidence),
        **{**_host_columns(rec.host), **host},
    )


def model_order_rows(
    ks: Sequence[int], models: dict[str, AccumulatorModel] | None = None, rows: int = 32
) -> list[OrderRow]:
    """Every model's inferred family at each K (``rows`` questions per call)."""
    chosen = MODELS if models is None else models
    host = host_facts()
    return [
        _row(infer_order(F32MatmulProbe(model, k, m=rows, batch=True), name), name, host)
        for name, model in chosen.items()
        for k in ks
    ]


def numpy_order_rows(
    ks: Sequence[int], shapes: Sequence[tuple[int, int]], seed: int
) -> tuple[list[OrderRow], list[PositionsRecord]]:
    """The trees of numpy's matmul per (M, N) and K, every output, and what they reproduce."""
    rows, records = [], []
    host = host_facts()
    for m, n in shapes:
        for k in ks:
            probe = F32MatmulProbe(numpy_matmul, k, m=m, n=n)
            rec = infer_positions(probe, f"numpy {m}x{n}", seed=seed + k, host=host)
            rows.append(library_row(rec, "numpy.matmul"))
            records.append(rec)
    return rows, records
