"""The ecosystem table's GEMM rows: each CPU fp8 GEMM a user can import, declared and checked.

Each row runs one library GEMM (``examples/gemm``: torch's ``_scaled_mm``
per tensor and rowwise, torch's bfloat16 and float16 matmul, onnxruntime's
DequantizeLinear -> MatMul and Cast -> MatMul, jax's float8 dot) as a black
box in a child process, and:

1. infers its declaration at :data:`GEMM_SHAPE` (order by class, scale
   placement, output rounding; :func:`fp8lab.order.gemm_infer.infer_gemm`);
2. runs G3 under it (PASS expected);
3. runs G3 under the sequential folded declaration with the same scales'
   granularity and out dtype (:func:`sequential_folded`; FAIL expected,
   its counts kept);
4. keeps the host facts the kernel's process measured (library, version,
   backend, threads).

A library that does not import gives a row whose ``status`` is ``absent``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import importlib.util
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fp8lab.gates.g3 import run_g3_report
from fp8lab.gates.g3_spec import describe_declaration
from fp8lab.kernels.sources.isolated import KernelHost
from fp8lab.order.gemm_infer import GemmInferenceError, infer_gemm
from fp8lab.order.host import host_facts
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.runtime.locations import checkout_root
from fp8lab.specs.gemm_decl import GemmDeclaration

__all__ = [
    "GEMM_ROWS",
    "GEMM_SHAPE",
    "GemmRow",
    "gemm_row",
    "gemm_summary",
    "gemm_version",
    "sequential_folded",
]

GEMM_SHAPE = (64, 64, 256)


@dataclass(frozen=True)
class GemmRow:
    """One library GEMM: its distribution, the modules it needs, the kernel and how it is called."""

    library: str
    modules: tuple[str, ...]
    path: str
    kernel: str
    out: str = "f32"
    rowwise: bool = False


_T, _O, _J = ("torch",), ("onnxruntime", "onnx"), ("jax", "jaxlib")
GEMM_ROWS = (
    GemmRow("torch", _T, "_scaled_mm per tensor", "examples.gemm.torch_gemms:scaled_mm"),
    GemmRow("torch", _T, "_scaled_mm rowwise", "examples.gemm.torch_gemms:scaled_mm",
            rowwise=True),
    GemmRow("torch", _T, "matmul bfloat16", "examples.gemm.torch_gemms:bf16_matmul", "bf16"),
    GemmRow("torch", _T, "matmul float16", "examples.gemm.torch_gemms:f16_matmul", "f16"),
    GemmRow("onnxruntime", _O, "DequantizeLinear -> MatMul",
            "examples.gemm.onnxruntime_gemms:dequantize_matmul"),
    GemmRow("onnxruntime", _O, "Cast -> MatMul -> Mul",
            "examples.gemm.onnxruntime_gemms:cast_matmul"),
    GemmRow("jax", _J, "dot float8 (preferred float32)", "examples.gemm.jax_gemms:dot"),
)  # fmt: skip


def gemm_version(row: GemmRow) -> str | None:
    """The installed version of ``row.library``, or None where one of its modules is missing."""
    try:
        if any(importlib.util.find_spec(m) is None for m in row.modules):
            return None
        return importlib.metadata.version(row.library)
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return None


def sequential_folded(decl: GemmDeclaration) -> GemmDeclaration:
    """The sequential float32 sum, folded scales, at ``decl``'s shapes, scales and out dtypes."""
    return dataclasses.replace(
        decl,
        name="sequential_folded",
        source="sequential float32 sum, f32(f32(s_a*s_b)*acc), float32 output",
        products="exact",
        scales="folded",
        scale_order="b-first",
        intermediate="f32",
        classes=tuple(
            dataclasses.replace(c, nodes=_sequential(c.shape[2]), family="sequential", products="")
            for c in decl.classes
        ),
        output="float32",
        output_rounding="once",
    )


def _sequential(k: int) -> tuple[tuple[int, int], ...]:
    return tuple((0, 1) if t == 0 else (k + t - 1, t + 1) for t in range(k - 1))


@contextlib.contextmanager
def _examples_importable() -> Iterator[None]:
    """The checkout on ``sys.path`` (the kernel's process inherits it): ``examples.gemm``."""
    root = checkout_root()
    added = root is not None and str(root) not in sys.path
    if added:
        sys.path.insert(0, str(root))
    try:
        yield
    finally:
        if added:
            sys.path.remove(str(root))


_MEASURED = (
    "declaration", "families", "scales", "output", "infer_calls", "infer_seconds", "own_status",
    "own_outputs", "own_mismatches", "spec_status", "spec_mismatches", "spec_failed",
    "first_call", "host_library", "host_version", "host_backend", "host_threads",
)  # fmt: skip


def gemm_row(
    row: GemmRow,
    shape: tuple[int, int, int] = GEMM_SHAPE,
    *,
    seed: int = 0,
    timeout: float = 300.0,
) -> dict[str, Any]:
    """One table row: the inferred declaration, G3 under it and under sequential/folded, the host.

    ``status`` is ``checked``, ``absent`` (a module does not import),
    ``not-fixed`` (no declaration inferred: ``reason`` says why) or
    ``kernel fault``; the columns a status leaves unmeasured are None.
    """
    version = gemm_version(row)
    out: dict[str, Any] = {
        "library": row.library, "version": version or "absent", "path": row.path,
        "kernel": row.kernel, "out_dtype": row.out, "rowwise": row.rowwise,
        "shape": "x".join(map(str, shape)), "status": "checked", "reason": "",
        **dict.fromkeys(_MEASURED),
    }  # fmt: skip
    if version is None:
        return {**out, "status": "absent", "reason": f"{', '.join(row.modules)} not installed"}
    if checkout_root() is None:
        return {**out, "status": "absent", "reason": "examples/gemm is in the checkout only"}
    try:
        with _examples_importable(), KernelHost("gemm", row.kernel, timeout=timeout) as host:
            kernel = host.kernel()
            t0 = time.perf_counter()
            facts = host_facts(getattr(kernel, "host_facts", None))
            found = infer_gemm(kernel, shape, out=row.out, rowwise=row.rowwise, seed=seed,
                               host=facts)  # fmt: skip
            seconds = time.perf_counter() - t0
            own = run_g3_report(kernel, declaration=found.declaration).result
            spec = run_g3_report(kernel, declaration=sequential_folded(found.declaration)).result
    except GemmInferenceError as exc:
        return {**out, "status": "not-fixed", "reason": str(exc)}
    except KernelFaultError as exc:
        return {**out, "status": "kernel fault", "reason": exc.reason}
    decl, target = found.declaration, facts.get("target", {})
    return {
        **out,
        "declaration": describe_declaration(decl),
        "families": ", ".join(c.family or "no known family" for c in decl.classes),
        "scales": f"{decl.scales} ({decl.scale_order})" if decl.scales in ("accumulator", "product")
        else (f"operands ({decl.products} products)" if decl.scales == "operands" else decl.scales),
        "output": f"{decl.output} {decl.output_rounding}",
        "infer_calls": found.order.calls + found.order.check_calls,
        "infer_seconds": round(seconds, 1),
        "own_status": own.status.value, "own_outputs": own.words, "own_mismatches": own.mismatches,
        "spec_status": spec.status.value, "spec_mismatches": spec.mismatches,
        "spec_failed": spec.assertions_failed,
        "first_call": found.order.first_call.get("differs", 0),
        "host_library": target.get("library"), "host_version": target.get("version"),
        "host_backend": target.get("backend"), "host_threads": str(target.get("threads")),
    }  # fmt: skip


def gemm_summary(table: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, int]]:
    """Verdicts (G3 under the inferred declaration, sequential/folded's beside it) and numbers."""
    verdicts = {}
    for r in table:
        name = f"{r['library']} {r['path']} (G3 under its inferred declaration)"
        if r["status"] == "checked":
            verdicts[name] = (
                f"{r['own_status']} (under sequential/folded: {r['spec_status']}, "
                f"{r['spec_mismatches']} outputs off, expected FAIL)"
            )
        elif r["status"] in ("not-fixed", "kernel fault"):
            verdicts[name] = f"FAIL ({r['status']}: {r['reason']})"
        else:
            verdicts[name] = f"PENDING ({r['status']}: {r['reason']})"
    checked = [r for r in table if r["status"] == "checked"]
    numbers = {
        "GEMM rows": len(table),
        "GEMM rows checked": len(checked),
        "GEMM rows absent": sum(r["status"] == "absent" for r in table),
        "GEMM outputs checked under their declarations": sum(r["own_outputs"] for r in checked),
        "GEMM outputs off under sequential/folded": sum(r["spec_mismatches"] for r in checked),
    }  # fmt: skip
    return verdicts, numbers
