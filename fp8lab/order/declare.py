"""Declare what a kernel follows from what inference finds: a G3 spec with inferred trees.

For each G3 shape (M, N, K) the kernel's tree is inferred with
:class:`~fp8lab.order.probe.Fp8MatmulProbe` (scales 1, f32 output: the
products of fp8 codes are exact and the epilogue is exact, so only the order
shows). FPRev cannot see how the products are rounded (an FMA chain or a
multiply then an add), so that is either declared or fitted: the first of
``PRODUCTS`` whose model reproduces the kernel bit for bit on one seeded
draw of operands (not G3's). The epilogue is declared. G3 then checks every
output on its own operands, so a wrong declaration or fit, or a tree that
holds at the probed output but not at another, is a FAIL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fp8lab.kernels.matmul_protocol import MatmulKernel, MatmulSpec
from fp8lab.order.infer import OrderRecord, infer_order
from fp8lab.order.probe import Fp8MatmulProbe, ProbeError
from fp8lab.order.tree import SumTree
from fp8lab.refs.gemm_model import INFERRED, OUTPUT_BITS, model_output_bits
from fp8lab.refs.gemm_tree import PRODUCTS
from fp8lab.runtime.guard import call_kernel
from fp8lab.specs.gemm_decl import GemmDeclaration, TreeClass

__all__ = ["FIT_SCALES", "declaration_from_order", "fit_products", "inferred_spec"]

FIT_SCALES = (0.035, 0.017)  # s_in, s_w of the fitting draw: not powers of two
_NAN_FREE = 0x7F


def fit_products(
    kernel: MatmulKernel,
    shape: tuple[int, int, int],
    tree: SumTree,
    epilogue: str,
    seed: int,
    bf16_epilogue: bool = False,
) -> str:
    """The first of ``PRODUCTS`` whose model equals the kernel on one seeded draw.

    Raises:
        ProbeError: when none does.
    """
    m, n, k = shape
    rng = np.random.default_rng(seed)
    a, b = (
        rng.integers(0, _NAN_FREE, s, dtype=np.uint8) | (rng.integers(0, 2, s, np.uint8) << 7)
        for s in ((m, k), (n, k))
    )
    s_in, s_w = (np.float32(s) for s in FIT_SCALES)
    got = np.asarray(call_kernel(kernel.matmul, a, b, s_in, s_w, "f32"))
    got_bits = np.ascontiguousarray(got, np.float32).view(OUTPUT_BITS["f32"])
    for products in PRODUCTS:
        want = model_output_bits(
            a, b, s_in, s_w, "f32", accumulation=INFERRED, epilogue=epilogue,
            bf16_epilogue=bf16_epilogue, trees={shape: (tree.nodes, products)},
        )  # fmt: skip
        if np.array_equal(got_bits, want):
            return products
    raise ProbeError(f"{kernel.name} {m}x{n}x{k}: no product rounding in {PRODUCTS} fits")


def inferred_spec(
    kernel: MatmulKernel,
    shapes: Sequence[tuple[int, int, int]],
    *,
    epilogue: str,
    products: str | None = None,
    bf16_epilogue: bool = False,
    seed: int = 0,
) -> tuple[MatmulSpec, list[OrderRecord]]:
    """The spec ``kernel`` follows if it sums as inferred at output (0, 0) of each shape.

    Args:
        kernel: the MatmulKernel to probe (unbatched: one question per call).
        shapes: (M, N, K) per G3 case; each K at most
            :data:`~fp8lab.order.probe.FP8_SAFE_K` for any tree, beyond
            that only for the trees the probe's docstring lists.
        epilogue: the epilogue the kernel applies (``prescaled`` for one
            that scales its operands first).
        products: one of ``PRODUCTS`` for every shape, or None to fit it
            per shape (:func:`fit_products`, from ``seed``).
        bf16_epilogue: as :class:`~fp8lab.kernels.matmul_protocol.MatmulSpec`.
        seed: the fitting draw's seed (shape i uses ``seed + i``).

    Returns:
        The spec and the inference record per shape.

    Raises:
        ProbeError: when a shape's counts fit no tree, or no rounding fits.
        ValueError: for an unknown ``products``, or a tree that adds more
            than two terms at once (a fused add has no float32 order; declare
            a named fused model instead).
    """
    if products is not None and products not in PRODUCTS:
        raise ValueError(f"products must be one of {PRODUCTS} or None, got {products!r}")
    trees, records = [], []
    for i, (m, n, k) in enumerate(dict.fromkeys(shapes)):
        rec = infer_order(Fp8MatmulProbe(kernel, k, m=m, n=n), f"{kernel.name} {m}x{n}x{k}")
        if rec.tree.max_fan_in() > 2:
            raise ValueError(f"{rec.kernel}: a fused {rec.tree.max_fan_in()}-term add")
        chosen = products or fit_products(
            kernel, (m, n, k), rec.tree, epilogue, seed + i, bf16_epilogue
        )
        trees.append(((m, n, k), rec.tree.nodes, chosen))
        records.append(rec)
    return MatmulSpec(INFERRED, epilogue, bf16_epilogue, tuple(trees)), records


def _outputs(pairs: Sequence[Sequence[int]], m: int, n: int) -> str:
    rows = sorted({int(p[0]) for p in pairs})
    cols = sorted({int(p[1]) for p in pairs})
    if len(pairs) == m * n:
        return "all"
    if len(pairs) == len(rows) * len(cols):
        return f"{','.join(map(str, rows))}:{','.join(map(str, cols))}"
    return ";".join(f"{int(p[0])},{int(p[1])}" for p in pairs)


def declaration_from_order(record: Mapping[str, Any], epilogue: GemmDeclaration) -> GemmDeclaration:
    """``epilogue``'s scales and products with the classes an ``fp8lab order`` record inferred.

    The record (``fp8lab order --as fp8 --json``) gives the shape, each class's
    outputs and tree, the out dtype and the output rounding its check found;
    the declaration then holds at that shape only.

    Raises:
        ValueError: for a record that is not an fp8 order run that reproduced
            its kernel, or whose classes are not binary trees.
    """
    try:
        if record["probe"] != "fp8_matmul" or record["verdict"] != "reproduced":
            raise ValueError(
                f"want a reproduced fp8 order run, got probe {record['probe']!r}, "
                f"verdict {record['verdict']!r}"
            )
        (m, n), k = record["shape"], int(record["k"])
        classes = []
        for c in record["position_classes"]:
            nodes = tuple((int(x), int(y)) for x, y in c["tree"]["nodes"])
            classes.append(TreeClass((int(m), int(n), k), _outputs(c["outputs"], int(m), int(n)),
                                     nodes, family=str(c.get("family") or "")))  # fmt: skip
        output, rounding = str(record.get("output_rounding") or "float32 once").split()
        out = str(record.get("out", "f32"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not an fp8lab order record of a fixed order: {exc}") from None
    return dataclasses.replace(
        epilogue,
        name=f"{epilogue.name}+order",
        source=f"{epilogue.source}; order: {record.get('kernel')} at {m}x{n}x{k}",
        accumulation=INFERRED,
        classes=tuple(classes),
        output=output,
        output_rounding=rounding,
        outputs=(out,),
        k_multiple=1,
        n_multiple=1,
    )
