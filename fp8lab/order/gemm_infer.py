"""Infer a GEMM's whole declaration: its order by class, its scales and its output rounding.

:func:`infer_gemm` runs three steps on one product shape, then writes what it
found as a :class:`~fp8lab.specs.gemm_decl.GemmDeclaration`:

1. **Order and output rounding**: every output's tree by FPRev, grouped into
   classes (:func:`fp8lab.order.per_position.infer_positions`, probes sized
   for the out dtype, after ``warmup`` calls), each class's tree run as a
   model on seeded fp8 operands with scales 1 under each output rounding the
   out dtype allows (float32; bfloat16 or float16 once, or per add).
2. **Scale placement and product rounding**: the kernel is called on
   ``draws`` seeded operand draws with scales that are not powers of two (one
   per tensor, or per row of A and column of the output), and the first
   candidate of :func:`scale_candidates` whose model equals every output bit
   for bit is kept: none, folded, accumulator (either order), product (either
   order), operands (each product rounding), then the exact intermediate.
3. The declaration names the classes (as inferred, for that shape), the
   scales, the output rounding and the out dtype; G3 then checks it on its
   own operands (``fp8lab gates --gate G3 --gemm-file``).

A kernel with no fixed order (``not-fixed``), a fused node (no float32
model), or no candidate that fits is refused with the reason
(:class:`GemmInferenceError`, carrying the order record).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from fp8lab.kernels.matmul_protocol import MatmulKernel
from fp8lab.kernels.sources.library_facts import library_facts
from fp8lab.order.fp8_probe import Fp8MatmulProbe
from fp8lab.order.host import host_facts
from fp8lab.order.per_position import PositionsRecord, infer_positions
from fp8lab.order.positions import PositionClass, spans
from fp8lab.order.reproduce import fp8_codes
from fp8lab.refs.gemm_declared import DECLARED_BITS, declared_output_bits
from fp8lab.runtime.guard import call_kernel
from fp8lab.specs.gemm_decl import INFERRED, GemmDeclaration, TreeClass

__all__ = [
    "FIT_SCALES",
    "GemmInference",
    "GemmInferenceError",
    "class_outputs",
    "infer_gemm",
    "scale_candidates",
]

FIT_SCALES = (0.035, 0.017)  # s_a, s_b of the fitting draws: not powers of two


class GemmInferenceError(ValueError):
    """No declaration: the order is not fixed, has a fused node, or no candidate fits."""

    def __init__(self, reason: str, record: PositionsRecord | None = None) -> None:
        super().__init__(reason)
        self.record = record


@dataclasses.dataclass(frozen=True)
class GemmInference:
    """What :func:`infer_gemm` found: the declaration, the order record and the fit."""

    declaration: GemmDeclaration
    order: PositionsRecord
    candidates_tried: int
    outputs_fitted: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: the order record, the fit's counts and the declaration's fields."""
        decl = dataclasses.asdict(self.declaration)
        decl["classes"] = [
            {**c, "nodes": [list(p) for p in c["nodes"]]} for c in decl.get("classes", [])
        ]
        return {
            "declaration": decl,
            "order": self.order.to_json(),
            "candidates_tried": self.candidates_tried,
            "outputs_fitted": self.outputs_fitted,
            "seconds": self.seconds,
        }


def class_outputs(cls: PositionClass, m: int, n: int) -> str:
    """A class's outputs as a declaration names them: ``all``, ``ROWS:COLS`` or ``i,j;...``."""
    rows = sorted({r for r, _ in cls.outputs})
    cols = sorted({c for _, c in cls.outputs})
    if len(cls.outputs) == m * n:
        return "all"
    if len(cls.outputs) == len(rows) * len(cols):
        return f"{spans(rows)}:{spans(cols)}"
    return ";".join(f"{r},{c}" for r, c in cls.outputs)


def scale_candidates(base: GemmDeclaration) -> Iterator[GemmDeclaration]:
    """Every scale placement and product rounding, simplest first, on ``base``'s other fields."""
    rep = dataclasses.replace
    yield rep(base, scales="none", a_scale="tensor", b_scale="tensor")
    yield rep(base, scales="folded")
    for order in ("b-first", "a-first"):
        yield rep(base, scales="accumulator", scale_order=order)
    for order in ("a-first", "b-first"):
        yield rep(base, scales="product", scale_order=order)
    for products in ("rounded", "fused", "fused_high"):
        yield rep(base, scales="operands", products=products)
    yield rep(base, scales="folded", intermediate="exact")


def _scales(rng: np.random.Generator, m: int, n: int, rowwise: bool) -> tuple[Any, Any]:
    if not rowwise:
        return np.float32(FIT_SCALES[0]), np.float32(FIT_SCALES[1])
    s_a = (FIT_SCALES[0] * 2.0 ** rng.uniform(-1, 1, m)).astype(np.float32)
    return s_a, (FIT_SCALES[1] * 2.0 ** rng.uniform(-1, 1, n)).astype(np.float32)


def _matmul(kernel: MatmulKernel, *args: Any) -> Any:
    with np.errstate(all="ignore"):
        return kernel.matmul(*args)


def _fit(
    kernel: MatmulKernel, base: GemmDeclaration, rowwise: bool, out: str, seed: int, draws: int
) -> tuple[GemmDeclaration | None, int, int]:
    """The first candidate equal to the kernel on every draw; candidates tried; outputs."""
    (m, n, k), bits = base.shapes[0], DECLARED_BITS[out]
    rng = np.random.default_rng([seed, 2])
    calls = []
    for _ in range(draws):
        a, b = fp8_codes(rng, (m, k)), fp8_codes(rng, (n, k))
        s_a, s_b = _scales(rng, m, n, rowwise)
        got = np.asarray(call_kernel(_matmul, kernel, a, b, s_a, s_b, out))
        calls.append((a, b, s_a, s_b, np.ascontiguousarray(got).view(bits)))
    tried = 0
    for cand in scale_candidates(base):
        tried += 1
        if all(
            np.array_equal(declared_output_bits(a, b, s_a, s_b, out, cand), got)
            for a, b, s_a, s_b, got in calls
        ):
            return cand, tried, draws * m * n
    return None, tried, draws * m * n


def infer_gemm(
    kernel: MatmulKernel,
    shape: tuple[int, int, int],
    *,
    out: str = "f32",
    rowwise: bool = False,
    name: str = "inferred",
    warmup: int = 1,
    seed: int = 0,
    draws: int = 2,
    method: str = "recursive",
    host: dict[str, Any] | None = None,
) -> GemmInference:
    """The declaration ``kernel`` follows at ``shape`` (M, N, K), from its outputs alone.

    Args:
        kernel: the MatmulKernel (its ``spec`` is not read: the kernel is no witness).
        shape: the product shape to infer on; the declaration holds for it.
        out: the out dtype to call it with (``f32``, ``bf16``, ``f16``).
        rowwise: scales per row of A and per column of the output (else one each).
        name: the declaration's name.
        warmup: calls before the first probe (a first-call effect is recorded).
        seed: the seed of the model checks and of the fitting draws.
        draws: fitting draws.
        method: FPRev's method (``recursive`` or ``basic``).
        host: the host facts to record (default: measured here, with the library
            facts of ``kernel`` as this process sees them).

    Raises:
        GemmInferenceError: when the order is not fixed, has a fused node, or no
            candidate reproduces every output.
        KernelFaultError: when the kernel raises.
    """
    t0 = time.perf_counter()
    m, n, k = shape
    probe = Fp8MatmulProbe(kernel, k, m, n, out=out)
    label = str(getattr(kernel, "name", "kernel"))
    if host is None:  # the kernel runs here: its library's facts are this process's
        host = host_facts(library_facts(kernel))
    record = infer_positions(probe, label, method=method, seed=seed, host=host, warmup=warmup)
    if record.verdict != "reproduced":
        why = "; ".join(record.evidence) or record.verdict
        raise GemmInferenceError(f"{label} {m}x{n}x{k}: order {record.verdict}: {why}", record)
    output, rounding = record.reproduction.output_rounding.split()
    classes = tuple(
        TreeClass(
            shape, class_outputs(c, m, n),
            tuple((int(x), int(y)) for x, y in c.tree.nodes),  # type: ignore[union-attr]
            family=c.family or "",
        )
        for c in record.classes
    )  # fmt: skip
    base = GemmDeclaration(
        name=name,
        source=f"fp8lab gemm infer: {label} at {m}x{n}x{k}, out {out}",
        accumulation=INFERRED,
        classes=classes,
        output=output,
        output_rounding=rounding,
        outputs=(out,),
        a_scale="row" if rowwise else "tensor",
        b_scale="column" if rowwise else "tensor",
    )
    found, tried, fitted = _fit(kernel, base, rowwise, out, seed, draws)
    if found is None:
        raise GemmInferenceError(
            f"{label} {m}x{n}x{k}: the order and output rounding fit, but no scale placement "
            f"of {tried} reproduces every output", record
        )  # fmt: skip
    return GemmInference(found, record, tried, fitted, time.perf_counter() - t0)
