r"""ONNX's ``QuantizeLinear`` and ``Cast`` to float8 as fp8lab kernels: the runtime computes.

The runtime is the onnx package's reference implementation or onnxruntime.

Each model is one small ONNX graph (opset 23, the first whose ``y_scale`` may
be float32 on a bfloat16 ``x``), built here and run as it is:

* :class:`OnnxStatic`, a G1 kernel: ``QuantizeLinear(x, y_scale, zero)`` with
  a float8 zero point of the format, ``saturate`` 1 or 0; per tensor
  (``y_scale`` a float32 scalar), per axis (axis 0 of x [M, K], ``y_scale``
  [M]) or blocked (axis 1, ``block_size`` 32, ``y_scale`` [M, K/32]).
* :func:`reference_dynamic` / :func:`onnxruntime_dynamic`, GQ per-tensor
  kernels: ``ReduceMax(Abs(x)) -> Div(., 448) -> QuantizeLinear(x, .)``, every
  step in x's dtype (the constant 448 is cast to it), the scale returned as
  float32 (``Cast``, exact from bfloat16).
* :class:`OnnxCast`, an exhaustive encoder: ``Cast(to=float8, saturate)``.

The codes come back as the runtime gives them (the reference: an ml_dtypes
float8 array; onnxruntime: its bytes). onnx and onnxruntime are imported
only when a kernel first runs; the sessions are built once per graph::

    fp8lab gates --gate G1 --rule onnx-quantizelinear-e4m3fn \
        --kernel fp8lab.kernels.library.onnx_quant:onnxruntime_e4m3fn
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

__all__ = [
    "OPSET",
    "OnnxCast",
    "OnnxStatic",
    "onnxruntime_dynamic",
    "reference_dynamic",
]

OPSET = 23
_BLOCK = 32
_FLOAT8 = {"e4m3fn": "FLOAT8E4M3FN", "e5m2": "FLOAT8E5M2"}


def _dtype_name(x: np.ndarray) -> str:
    return "BFLOAT16" if x.dtype.name == "bfloat16" else "FLOAT"


def _dims(name: str, rank: int) -> list[str]:
    return [f"{name}{i}" for i in range(rank)]


@cache
def _model(kind: str, x_type: str, rank: int, element: str, saturate: bool, layout: str) -> bytes:
    """The serialized graph of ``kind`` (``static``, ``dynamic``, ``cast``), x of ``rank``."""
    from onnx import TensorProto, checker, helper

    xt = getattr(TensorProto, x_type)
    ft = getattr(TensorProto, _FLOAT8[element])
    x = helper.make_tensor_value_info("x", xt, _dims("d", rank))
    # e5m2: onnxruntime's Python binding has no numpy type for it; a Cast to float16 carries
    # it out (exact: an e5m2 value is the top byte of its float16), its code that top byte
    out = TensorProto.FLOAT16 if element == "e5m2" else ft
    y = helper.make_tensor_value_info("y", out, _dims("d", rank))
    widen = [helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT16)] if out != ft else []
    q = "q" if widen else "y"
    sat = int(saturate)
    if kind == "cast":
        nodes = [helper.make_node("Cast", ["x"], [q], to=ft, saturate=sat), *widen]
        graph = helper.make_graph(nodes, "cast", [x], [y])
    elif kind == "static":
        attrs: dict[str, Any] = {"saturate": sat, "output_dtype": ft}
        if layout == "axis":
            attrs["axis"] = 0
        elif layout == "block":
            attrs.update(axis=1, block_size=_BLOCK)
        nodes = [helper.make_node("QuantizeLinear", ["x", "s"], [q], **attrs), *widen]
        s_rank = {"tensor": 0, "axis": 1, "block": 2}[layout]
        s = helper.make_tensor_value_info("s", TensorProto.FLOAT, _dims("s", s_rank))
        graph = helper.make_graph(nodes, "static", [x, s], [y])
    else:
        top = helper.make_tensor("top", TensorProto.FLOAT, [], [float(_top(element))])
        nodes = [
            helper.make_node("Abs", ["x"], ["a"]),
            helper.make_node("ReduceMax", ["a"], ["amax"], keepdims=0),
            helper.make_node("Cast", ["top"], ["m"], to=xt),
            helper.make_node("Div", ["amax", "m"], ["s"]),
            helper.make_node("QuantizeLinear", ["x", "s"], [q], saturate=sat, output_dtype=ft),
            *widen,
            helper.make_node("Cast", ["s"], ["scale"], to=TensorProto.FLOAT),
        ]
        scale = helper.make_tensor_value_info("scale", TensorProto.FLOAT, [])
        graph = helper.make_graph(nodes, "dynamic", [x], [y, scale], initializer=[top])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    checker.check_model(model)
    return bytes(model.SerializeToString())


def _top(element: str) -> float:
    return {"e4m3fn": 448.0, "e5m2": 57344.0}[element]


@cache
def _runner(runtime: str, model: bytes) -> Any:
    """A callable from the inputs (a dict) to the outputs (a list), built once per graph."""
    if runtime == "onnxruntime":
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one worker's core: the harness runs them side by side
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return lambda feeds: session.run(None, feeds)
    import onnx
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(onnx.load_from_string(model))
    return lambda feeds: evaluator.run(None, feeds)


def _run(runtime: str, kind: str, feeds: dict[str, Any], **how: Any) -> list[Any]:
    x = feeds["x"]
    model = _model(kind, _dtype_name(x), x.ndim, how["element"], how["saturate"], how["layout"])
    out = list(_runner(runtime, model)(feeds))
    if how["element"] == "e5m2":  # carried out as float16: its top byte is the e5m2 code
        import ml_dtypes

        top = (np.asarray(out[0], np.float16).view(np.uint16) >> 8).astype(np.uint8)
        out[0] = top.view(ml_dtypes.float8_e5m2)
    return out


class OnnxStatic:
    """``QuantizeLinear`` as a G1 kernel: ``quantize(x, scale)`` with scale a float32 or its array.

    Args:
        runtime: ``reference`` (the onnx package) or ``onnxruntime``.
        element: ``e4m3fn`` or ``e5m2``.
        saturate: the ``saturate`` attribute.
        layout: ``tensor``, ``axis`` (axis 0) or ``block`` (axis 1, 32 a block).
    """

    def __init__(self, runtime: str, element: str, saturate: bool, layout: str = "tensor") -> None:
        self.runtime, self.element, self.saturate, self.layout = runtime, element, saturate, layout
        tag = "" if saturate else "-nosat"
        where = "" if layout == "tensor" else f"-{layout}"
        self.name = f"onnx-{runtime}-{element}{tag}{where}"

    def quantize(self, x: np.ndarray, scale: Any) -> Any:
        """The codes ``QuantizeLinear`` gives ``x`` under ``scale``."""
        s = np.asarray(scale, np.float32)
        how = {"element": self.element, "saturate": self.saturate, "layout": self.layout}
        return _run(self.runtime, "static", {"x": np.ascontiguousarray(x), "s": s}, **how)[0]


def _dynamic(runtime: str, x: np.ndarray) -> tuple[Any, Any]:
    how = {"element": "e4m3fn", "saturate": True, "layout": "tensor"}
    codes, scale = _run(runtime, "dynamic", {"x": np.ascontiguousarray(x)}, **how)
    return codes, np.asarray(scale, np.float32).reshape(1)


def reference_dynamic(x: np.ndarray) -> tuple[Any, Any]:
    """GQ per-tensor: ReduceMax(|x|) / 448 -> QuantizeLinear, by the onnx reference."""
    return _dynamic("reference", x)


def onnxruntime_dynamic(x: np.ndarray) -> tuple[Any, Any]:
    """GQ per-tensor: ReduceMax(|x|) / 448 -> QuantizeLinear, by onnxruntime."""
    return _dynamic("onnxruntime", x)


class OnnxCast:
    """``Cast(to=float8, saturate)`` as an exhaustive encoder of ``runtime``.

    Called as ``encoder(x, fmt=..., saturate=...)``; the format and the policy
    come from the run.
    """

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime

    def __call__(self, x: np.ndarray, fmt: str = "e4m3fn", saturate: bool = True) -> Any:
        """The codes of float32 ``x`` (uint8)."""
        how = {"element": fmt, "saturate": saturate, "layout": "tensor"}
        out = np.asarray(_run(self.runtime, "cast", {"x": np.ascontiguousarray(x)}, **how)[0])
        return out.view(np.uint8)


reference_cast = OnnxCast("reference")
onnxruntime_cast = OnnxCast("onnxruntime")
# the G1 kernels: both runtimes, both formats, both saturate settings per tensor; e4m3fn
# saturating per axis and blocked
for _rt in ("reference", "onnxruntime"):
    for _el in ("e4m3fn", "e5m2"):
        for _sat in (True, False):
            _k = OnnxStatic(_rt, _el, _sat)
            globals()[_k.name.removeprefix("onnx-").replace("-", "_")] = _k
    for _lay in ("axis", "block"):
        _k = OnnxStatic(_rt, "e4m3fn", True, _lay)
        globals()[_k.name.removeprefix("onnx-").replace("-", "_")] = _k
