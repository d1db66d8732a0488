"""The ecosystem notebook's ONNX rows: ``QuantizeLinear`` and ``Cast`` by two runtimes.

The runtimes are the onnx package's reference implementation and
onnxruntime, each run as a black box in a child process.

* :func:`onnx_static_rows`: ``QuantizeLinear`` with a given scale
  (:class:`~fp8lab.kernels.library.onnx_quant.OnnxStatic`) under G1 and the
  ONNX rule of its layout, format and ``saturate``
  (:data:`~fp8lab.specs.static_rules.STATIC_RULES`), float32 input, then
  bfloat16 input (a runtime without a bfloat16 kernel says so).
* :func:`onnx_dynamic_rows`: ``ReduceMax(Abs(x)) -> Div(., 448) ->
  QuantizeLinear`` on GQ's per-tensor population: ``rules infer`` names the
  rule it follows (or the first call none explains), and GQ gives its verdict
  under ``vllm-per-tensor``.
* :func:`onnx_cast_rows`: ``Cast`` to e4m3fn and e5m2, ``saturate`` 1 and 0,
  over a range of float32 patterns (all 2^32 by default) against the scan
  reference, which is the ONNX specification's table (RNE; saturating: inf
  and overflow to the largest finite value; otherwise: overflow and inf to
  inf in e5m2, NaN in e4m3fn), every NaN code the same NaN (``--nan any``:
  the table leaves a saturated NaN's sign open).

A runtime that does not import gives rows whose status is ``absent``, with
the reason and the install line (``pip install 'fp8lab[onnx]'``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from typing import Any

import numpy as np

from fp8lab.gates.g1 import G1_INPUT_DTYPES, run_g1
from fp8lab.gates.gq import GQ_RULES, gq_calls
from fp8lab.gates.records import GateResult
from fp8lab.gates.rule_inference import infer_rule, record_outputs
from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
from fp8lab.runtime.extras import absent, install_line
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.nan import NAN_POLICIES
from fp8lab.studies.ecosystem import _gq_on
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun, sharing_workers

__all__ = [
    "ONNX_RUNTIMES",
    "ONNX_STATIC",
    "onnx_cast_rows",
    "onnx_dynamic_rows",
    "onnx_static_rows",
    "runtime_version",
]

_MODULE = "fp8lab.kernels.library.onnx_quant"
ONNX_RUNTIMES = ("reference", "onnxruntime")
# (kernel suffix, static rule): per tensor both formats and saturate settings, per axis, blocked
ONNX_STATIC = (
    ("e4m3fn", "onnx-quantizelinear-e4m3fn"),
    ("e4m3fn_nosat", "onnx-quantizelinear-e4m3fn-nosat"),
    ("e5m2", "onnx-quantizelinear-e5m2"),
    ("e5m2_nosat", "onnx-quantizelinear-e5m2-nosat"),
    ("e4m3fn_axis", "onnx-quantizelinear-e4m3fn-axis"),
    ("e4m3fn_block", "onnx-quantizelinear-e4m3fn-block-32"),
)
_PACKAGES = {"reference": "onnx", "onnxruntime": "onnxruntime"}


def runtime_version(runtime: str) -> str | None:
    """The installed version of ``runtime``'s package, or None where it does not import."""
    package = _PACKAGES[runtime]
    try:
        if importlib.util.find_spec(package) is None or importlib.util.find_spec("onnx") is None:
            return None
        return importlib.metadata.version(package)
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return None


def _absent(runtime: str, **row: Any) -> dict[str, Any]:
    """A row of a runtime that is not here: ``absent``, with why and the install line."""
    why = absent("onnx", ("onnx", _PACKAGES[runtime])) or f"{runtime}: {install_line('onnx')}"
    return {"runtime": runtime, "version": "-", **row, "status": "absent", "reason": why}


def _first_line(result: GateResult) -> str:
    if result.first_offenders:
        o = result.first_offenders[0]
        return f"{o.case} {o.word_class} x={o.input_hex}: got {o.got} want {o.want}"
    return result.reason.splitlines()[0][:160] if result.reason else ""


def onnx_static_rows(
    variants: tuple[tuple[str, str], ...] = ONNX_STATIC, timeout: float = 300.0
) -> list[dict[str, Any]]:
    """One row per runtime and ``QuantizeLinear`` variant (suffix, rule): G1 under its rule."""
    rows = []
    for runtime in ONNX_RUNTIMES:
        version = runtime_version(runtime)
        for suffix, rule in variants:
            kernel = f"{_MODULE}:{runtime}_{suffix}"
            if version is None:
                rows.append(_absent(runtime, kernel=kernel, rule=rule))
                continue
            with KernelHost("quant", kernel, timeout=timeout) as host:
                try:
                    quant = host.kernel()
                except KernelLoadError as exc:
                    rows.append({**_absent(runtime, kernel=kernel, rule=rule), "note": str(exc)})
                    continue
                f32 = run_g1(
                    quant,
                    rule=rule,
                    input_dtypes=("float32",),
                    nan_policy=NAN_POLICIES["canonical"],
                )
                bf16 = run_g1(
                    quant,
                    rule=rule,
                    input_dtypes=("bfloat16",),
                    nan_policy=NAN_POLICIES["canonical"],
                )
            rows.append(
                {
                    "runtime": runtime,
                    "version": version,
                    "kernel": kernel.split(":")[1],
                    "rule": rule,
                    "status": f32.status.value,
                    "cases": f32.cases,
                    "failed": f32.assertions_failed,
                    "words": f32.words,
                    "mismatches": f32.mismatches,
                    "first": _first_line(f32),
                    "bfloat16": bf16.status.value,
                    "bfloat16_note": _first_line(bf16),
                }
            )
    return rows


def onnx_dynamic_rows(seed: int = 0, timeout: float = 300.0) -> list[dict[str, Any]]:
    """One row per runtime: the ReduceMax -> Div -> QuantizeLinear graph on GQ's per-tensor calls.

    The calls are every per-tensor call the runtime can take: a runtime without a
    bfloat16 kernel for an op of the graph is run on the float32 calls, and the
    row says so.
    """
    scheme = "per-tensor"
    present = [r for r in ONNX_RUNTIMES if runtime_version(r) is not None]
    calls = gq_calls(scheme, GQ_RULES[scheme][0], seed=seed) if present else []
    rows = []
    for runtime in ONNX_RUNTIMES:
        kernel = f"{_MODULE}:{runtime}_dynamic"
        version = runtime_version(runtime)
        if version is None:
            rows.append(_absent(runtime, kernel=kernel))
            continue
        inputs: tuple[str, ...] = G1_INPUT_DTYPES
        note = ""
        with KernelHost("scheme", kernel, scheme=scheme, timeout=timeout) as host:
            func = host.kernel()
            try:
                outputs = record_outputs(func, calls, scheme)
                taken = calls
            except KernelFaultError as exc:
                note = f"bfloat16: {exc.reason.splitlines()[0][:160]}"
                inputs = ("float32",)
                taken = [c for c in calls if c.args[0].dtype == np.float32]
                outputs = record_outputs(func, taken, scheme)
        found = infer_rule(scheme, kernel, taken, outputs)
        spec = _gq_on(taken, outputs, scheme, "vllm-per-tensor")
        rows.append(
            {
                "runtime": runtime,
                "version": version,
                "inputs": ", ".join(inputs),
                "calls": len(taken),
                "inferred": found.status,
                "nearest_rule": found.nearest_named,
                "differing_axes": ", ".join(
                    f"{k}: {a} -> {b}" for k, (a, b) in found.differing.items()
                ),
                "ambiguous_axes": ", ".join(found.ambiguous_axes),
                "first_unexplained": found.first_unexplained,
                "spec_status": spec.status.value,
                "spec_failed": spec.assertions_failed,
                "note": note,
            }
        )
    return rows


def onnx_cast_rows(run: RangeRun | None = None) -> list[dict[str, Any]]:
    """One row per runtime, format and ``saturate``: ``Cast`` against the specification's table."""
    with sharing_workers(run or RangeRun()) as shared:
        return _cast_rows(shared)


def _cast_rows(run: RangeRun) -> list[dict[str, Any]]:
    rows = []
    for runtime in ONNX_RUNTIMES:
        version = runtime_version(runtime)
        encoder = "onnx-reference" if runtime == "reference" else "onnxruntime"
        for fmt in ("e4m3fn", "e5m2"):
            for saturate in (True, False):
                where = {"format": fmt, "saturate": int(saturate)}
                if version is None:
                    rows.append(_absent(runtime, **where))
                    continue
                record = run_exhaustive(encoder, "scan", fmt, saturate=saturate, nan="any", run=run)
                example = next(iter(record.examples.values()), [{}])[0]
                rows.append(
                    {
                        "runtime": runtime,
                        "version": version,
                        **where,
                        "status": str(record.status),
                        "examined": record.examined,
                        "mismatches": record.mismatches,
                        "by_class": ", ".join(
                            f"{k}={v}" for k, v in record.mismatches_by_class.items() if v
                        ),
                        "nan_codes_differ": record.nan_code_mismatches,
                        "first": ", ".join(f"{k}={v}" for k, v in example.items()),
                        "fault": record.fault,
                    }
                )
    return rows
