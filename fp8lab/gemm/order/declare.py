"""Declare what a kernel follows from what inference finds: a G3 spec with inferred trees.

For each G3 shape (M, N, K) the kernel's tree is inferred with
:class:`~fp8lab.gemm.order.probe.Fp8MatmulProbe` (scales 1, f32 output: the
products of fp8 codes are exact and the epilogue is exact, so only the order
shows), and the spec says ``accumulation="inferred"`` with those trees. What
inference cannot see is declared: the epilogue, and whether products are
rounded or fused into the adds (an FMA chain); G3 then checks every output
bit for bit, so a wrong declaration, or a tree that holds at the probed
output but not at another, is a FAIL (issue 14 item 3; schemes-and-order §3.1).
"""

from __future__ import annotations

from collections.abc import Sequence

from fp8lab.gemm.order.infer import OrderRecord, infer_order
from fp8lab.gemm.order.probe import Fp8MatmulProbe
from fp8lab.gemm.protocol import MatmulKernel, MatmulSpec
from fp8lab.refs.gemm_model import INFERRED

__all__ = ["inferred_spec"]


def inferred_spec(
    kernel: MatmulKernel,
    shapes: Sequence[tuple[int, int, int]],
    *,
    epilogue: str,
    products: str,
    bf16_epilogue: bool = False,
) -> tuple[MatmulSpec, list[OrderRecord]]:
    """The spec ``kernel`` follows if it sums as inferred at output (0, 0) of each shape.

    Args:
        kernel: the MatmulKernel to probe (unbatched: one question per call).
        shapes: (M, N, K) per G3 case; each K at most
            :data:`~fp8lab.gemm.order.probe.FP8_SAFE_K` for any tree, beyond
            that only for the trees the probe's docstring lists.
        epilogue: the epilogue the kernel applies (``prescaled`` for one
            that scales its operands first).
        products: ``rounded`` or ``fused``.
        bf16_epilogue: as :class:`~fp8lab.gemm.protocol.MatmulSpec`.

    Returns:
        The spec and the inference record per shape.

    Raises:
        ProbeError: when a shape's counts fit no tree.
        ValueError: when a tree adds more than two terms at once (a fused
            add has no float32 order; declare a named fused model instead).
    """
    trees, records = [], []
    for m, n, k in dict.fromkeys(shapes):
        rec = infer_order(Fp8MatmulProbe(kernel, k, m=m, n=n), f"{kernel.name} {m}x{n}x{k}")
        if rec.tree.max_fan_in() > 2:
            raise ValueError(f"{rec.kernel}: a fused {rec.tree.max_fan_in()}-term add")
        trees.append(((m, n, k), rec.tree.nodes))
        records.append(rec)
    spec = MatmulSpec(INFERRED, epilogue, bf16_epilogue, tuple(trees), products)
    return spec, records
