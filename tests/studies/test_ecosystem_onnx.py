"""The ONNX rows' kernels: QuantizeLinear and Cast, run by the onnx reference and onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates.g1 import run_g1
from fp8lab.gates.records import GateStatus
from fp8lab.refs.scan import ScanPolicy, scan_pattern_range
from fp8lab.specs.formats import FORMATS
from fp8lab.studies import ecosystem_onnx

pytest.importorskip("onnx", reason="onnx is not installed (the onnx extra)")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the onnx extra)")

from fp8lab.kernels.library import onnx_quant


@pytest.mark.parametrize("runtime", ["reference", "onnxruntime"])
@pytest.mark.parametrize("suffix", ["e4m3fn", "e4m3fn_block"])
def test_quantize_linear_passes_its_onnx_rule_on_float32(runtime: str, suffix: str) -> None:
    rule = dict(ecosystem_onnx.ONNX_STATIC)[suffix]
    kernel = getattr(onnx_quant, f"{runtime}_{suffix}")
    result = run_g1(kernel, rule=rule, input_dtypes=("float32",), scales=(0.0092, 0.77, 7.25))
    assert result.status is GateStatus.PASS, result.reason


def test_onnxruntime_sends_the_e5m2_overflow_tie_to_nan_where_the_table_says_inf() -> None:
    x = np.array([61440, 61441, 65536, -61440], np.float32)  # 57344 + half a step and above
    assert onnx_quant.reference_cast(x, "e5m2", False).tolist() == [0x7C, 0x7C, 0x7C, 0xFC]
    got = onnx_quant.onnxruntime_cast(x, "e5m2", False)
    assert FORMATS["e5m2"].is_nan_code(int(got[0])) and got[2] == 0x7C


def test_the_casts_agree_with_the_table_on_a_window_and_say_where_not() -> None:
    lo, hi = 0x43E0_0000, 0x43F0_0001  # e4m3fn: 448 up to 480, the first overflow past the tie
    x = (np.arange(lo, hi, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    for saturate in (True, False):
        table = scan_pattern_range(lo, hi, FORMATS["e4m3fn"], ScanPolicy(saturate, False))
        assert np.array_equal(onnx_quant.reference_cast(x, "e4m3fn", saturate), table)
    ort = onnx_quant.onnxruntime_cast(x, "e4m3fn", False)
    table = scan_pattern_range(lo, hi, FORMATS["e4m3fn"], ScanPolicy(False, False))
    assert int(table[-1]) == 0x7F and int(ort[-1]) == 0x7E  # 480: NaN by the table, 448 by ORT


def test_rows_say_absent_without_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ecosystem_onnx, "runtime_version", lambda runtime: None)
    rows = ecosystem_onnx.onnx_static_rows() + ecosystem_onnx.onnx_dynamic_rows()
    rows += ecosystem_onnx.onnx_cast_rows()
    assert rows and all(r["status"] == "absent" for r in rows)
    assert len(rows) == 2 * (len(ecosystem_onnx.ONNX_STATIC) + 1 + 4)


def test_the_runtimes_are_built_in_encoders_of_exhaustive() -> None:
    from fp8lab.sweeps.exhaustive_chunks import compare_chunk

    lo, hi = 0x43E0_0000, 0x43F0_0001  # 448 up to 480
    for runtime, mismatches in (("onnx-reference", 0), ("onnxruntime", 1)):
        result = compare_chunk(runtime, "scan", "e4m3fn", False, "any", lo, hi)
        assert result.fault == "" and result.examined == hi - lo
        assert sum(v for k, v in result.by_class.items() if k != "nan_code") == mismatches
