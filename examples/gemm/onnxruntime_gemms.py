"""onnxruntime's CPU GEMMs on float8 as G3 kernels: two ONNX graphs, the arrays moved in and out.

``dequantize_matmul``: DequantizeLinear(A, s_a) and DequantizeLinear(B, s_b)
(float8e4m3fn to float32; 1-D scales along axis 0 for rowwise), then
MatMul(A', B'ᵀ). ``cast_matmul``: Cast(A), Cast(B) to float32, MatMul, then
Mul by s_a and by s_b. Both return float32 [M,N].

    K=examples.gemm.onnxruntime_gemms:dequantize_matmul
    fp8lab gemm infer --kernel $K --write-gemm d.toml
    fp8lab gates --gate G3 --kernel $K --gemm-file d.toml
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper

library = "onnxruntime"


def _inputs(rowwise: bool) -> list[Any]:
    return [
        helper.make_tensor_value_info("A", TensorProto.FLOAT8E4M3FN, ["M", "K"]),
        helper.make_tensor_value_info("B", TensorProto.FLOAT8E4M3FN, ["N", "K"]),
        helper.make_tensor_value_info("sa", TensorProto.FLOAT, ["M"] if rowwise else []),
        helper.make_tensor_value_info("sb", TensorProto.FLOAT, ["N"] if rowwise else []),
    ]


@cache
def _session(kind: str, rowwise: bool) -> onnxruntime.InferenceSession:
    node = helper.make_node
    if kind == "dequantize":
        nodes = [
            node("DequantizeLinear", ["A", "sa"], ["Af"], axis=0),
            node("DequantizeLinear", ["B", "sb"], ["Bf"], axis=0),
            node("Transpose", ["Bf"], ["Bt"], perm=[1, 0]),
            node("MatMul", ["Af", "Bt"], ["Y"]),
        ]
    else:
        nodes = [
            node("Cast", ["A"], ["Af"], to=TensorProto.FLOAT),
            node("Cast", ["B"], ["Bf"], to=TensorProto.FLOAT),
            node("Transpose", ["Bf"], ["Bt"], perm=[1, 0]),
            node("MatMul", ["Af", "Bt"], ["P"]),
            node("Mul", ["P", "sa"], ["Pa"]),
            node("Mul", ["Pa", "sb"], ["Y"]),
        ]
    out = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", "N"])]
    graph = helper.make_graph(nodes, kind, _inputs(rowwise), out)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )


def _run(kind: str, a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any) -> np.ndarray:
    sa, sb = np.array(s_a, np.float32), np.array(s_b, np.float32)
    fp8 = TensorProto.FLOAT8E4M3FN
    feeds = {
        "A": onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(
            np.array(a_codes, np.uint8), fp8
        ),
        "B": onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(
            np.array(b_codes, np.uint8), fp8
        ),
        "sa": sa,
        "sb": sb,
    }
    return _session(kind, bool(sa.ndim)).run(None, feeds)[0]


def dequantize_matmul(
    a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str
) -> np.ndarray:
    """DequantizeLinear -> MatMul, float32 out."""
    return _run("dequantize", a_codes, b_codes, s_a, s_b)


def cast_matmul(
    a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str
) -> np.ndarray:
    """Cast -> MatMul -> Mul(s_a) -> Mul(s_b), float32 out."""
    return _run("cast", a_codes, b_codes, s_a, s_b)
