"""Which model G3 checks a kernel against: the ``spec`` the kernel declares.

A kernel may carry ``spec`` (a :class:`~fp8lab.kernels.matmul_protocol.MatmulSpec`, or
any object with its fields); without one it claims vllm.cpp's contract,
sequential float32 accumulation with a folded alpha. A spec
G3 cannot read is refused with the reason, never replaced by the default.
"""

from __future__ import annotations

from typing import Any

from fp8lab.kernels.matmul_protocol import VLLM_CPP_SPEC, MatmulSpec
from fp8lab.refs.gemm_accumulators import MODELS
from fp8lab.refs.gemm_model import EPILOGUES, INFERRED, INTERMEDIATES, VLLM_SWAP_AB_MAX_M
from fp8lab.refs.gemm_tree import PRODUCTS
from fp8lab.specs.gemm_decl import GemmDeclaration, TreeClass

__all__ = ["declaration_of", "declared_spec", "describe_declaration", "describe_model"]


def declared_spec(kernel: object) -> MatmulSpec:
    """The model ``kernel`` claims: its ``spec`` (any object with the fields), else vllm.cpp's.

    ``spec.accumulation`` must name a model in ``MODELS`` (or be ``inferred``
    with at least one tree) and ``spec.epilogue`` one of ``EPILOGUES``; the
    other fields default as in :class:`~fp8lab.kernels.matmul_protocol.MatmulSpec`.

    Raises:
        ValueError: for a spec G3 cannot read, naming the known models.
    """
    try:
        spec = getattr(kernel, "spec", VLLM_CPP_SPEC)
        accumulation = getattr(spec, "accumulation", None)
        epilogue = getattr(spec, "epilogue", "folded")
        bf16 = getattr(spec, "bf16_epilogue", False)
        trees = tuple(_tree_entry(t) for t in getattr(spec, "trees", ()))
        intermediate = getattr(spec, "intermediate", "f32")
        swap_max_m = getattr(spec, "swap_max_m", VLLM_SWAP_AB_MAX_M)
    except Exception as exc:  # noqa: BLE001 - a broken attribute is the kernel's fault
        raise ValueError(f"kernel spec unreadable: {type(exc).__name__}: {exc}") from None
    entries_ok = all(t[2] in PRODUCTS for t in trees)
    inferred = accumulation == INFERRED and bool(trees) and entries_ok
    plain = accumulation in MODELS and not trees
    rounding_ok = intermediate in INTERMEDIATES and (
        intermediate == "f32" or epilogue != "prescaled"
    )
    cut_ok = isinstance(swap_max_m, int) and not isinstance(swap_max_m, bool) and swap_max_m >= 0
    known = (inferred or plain) and epilogue in EPILOGUES and isinstance(bf16, bool)
    if not (known and rounding_ok and cut_ok):
        raise ValueError(
            f"kernel spec {spec!r} names no known model: accumulation must be one of "
            f"{sorted(MODELS)} with no trees, or {INFERRED!r} with trees of "
            f"((M, N, K), nodes, products in {list(PRODUCTS)}); "
            f"epilogue one of {list(EPILOGUES)}, bf16_epilogue a bool, intermediate one of "
            f"{list(INTERMEDIATES)} (f32 if prescaled), swap_max_m an int >= 0"
        )
    return MatmulSpec(str(accumulation), epilogue, bf16, trees, intermediate, swap_max_m)


def _tree_entry(entry: Any) -> tuple[tuple[int, int, int], tuple[tuple[int, ...], ...], str]:
    """``((M, N, K), nodes, products)`` with plain ints; anything else raises."""
    shape, nodes, products = entry
    m, n, k = (int(v) for v in shape)
    return (m, n, k), tuple(tuple(int(c) for c in kids) for kids in nodes), str(products)


def describe_model(spec: MatmulSpec) -> str:
    """``sequential accumulation, folded epilogue`` (+ ``, bf16 epilogue``)."""
    extra = ", bf16 epilogue" if spec.bf16_epilogue else ""
    if spec.intermediate != "f32":
        extra += f", {spec.intermediate} intermediate"
    if spec.epilogue == "vllm_cutlass" and spec.swap_max_m != VLLM_SWAP_AB_MAX_M:
        extra += f", swapped for M <= {spec.swap_max_m}"
    if spec.accumulation == INFERRED:
        shapes = ", ".join(f"{'x'.join(map(str, s))} ({p} products)" for s, _, p in spec.trees)
        extra += f", trees for {shapes}"
    return f"{spec.accumulation} accumulation, {spec.epilogue} epilogue{extra}"


_SCALES = {  # MatmulSpec.epilogue -> (scales, scale_order)
    "folded": ("folded", "b-first"),
    "two_scalar": ("accumulator", "b-first"),
    "two_scalar_swapped": ("accumulator", "a-first"),
    "vllm_cutlass": ("accumulator", "b-first"),
    "prescaled": ("operands", "b-first"),
}


def declaration_of(
    spec: MatmulSpec, name: str = "declared", k_multiple: int = 1
) -> GemmDeclaration:
    """The :class:`~fp8lab.specs.gemm_decl.GemmDeclaration` a (checked) MatmulSpec states.

    Each inferred tree becomes one class covering every output of its shape.
    """
    scales, order = _SCALES[spec.epilogue]
    classes = tuple(
        TreeClass(shape, "all", tuple((int(x), int(y)) for x, y in nodes), products)
        for shape, nodes, products in spec.trees
    )
    return GemmDeclaration(
        name=name,
        source=f"MatmulSpec: {describe_model(spec)}",
        scales=scales,
        scale_order=order,
        swap_max_m=spec.swap_max_m if spec.epilogue == "vllm_cutlass" else None,
        intermediate=spec.intermediate,
        accumulation=spec.accumulation,
        classes=classes,
        output="bfloat16" if spec.bf16_epilogue else "float32",
        k_multiple=k_multiple,
        n_multiple=k_multiple,
    )


def describe_declaration(decl: GemmDeclaration) -> str:
    """``gemm NAME: sequential accumulation, product scales (a-first), ...`` in one line."""
    parts = [f"{decl.accumulation} accumulation"]
    if decl.classes:
        counts = {s: sum(c.shape == s for c in decl.classes) for s in decl.shapes}
        shapes = ", ".join(
            f"{'x'.join(map(str, s))}: {n} class{'es' * (n > 1)}" for s, n in counts.items()
        )
        parts[0] += f" ({shapes})"
    ordered = decl.scales in ("accumulator", "product")
    parts.append(f"{decl.scales} scales" + (f" ({decl.scale_order})" if ordered else ""))
    if (decl.a_scale, decl.b_scale) != ("tensor", "tensor"):
        parts.append(f"{decl.a_scale} A scales, {decl.b_scale} B scales")
    if decl.products != "exact":
        parts.append(f"{decl.products} products")
    if decl.intermediate != "f32":
        parts.append(f"{decl.intermediate} intermediate")
    if decl.swap_max_m is not None:
        parts.append(f"swapped for M <= {decl.swap_max_m}")
    parts.append(f"output {decl.output} ({decl.output_rounding})")
    return f"gemm {decl.name}: " + ", ".join(parts)
