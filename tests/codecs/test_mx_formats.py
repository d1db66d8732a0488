"""The OCP MX formats (e8m0fnu, e2m1fn, e2m3fn, e3m2fn) through the same codecs and scan.

Exhaustive over every code; probes at every midpoint, one float32 step either
side, and the special values; the policy cases the fields imply (no NaN, no
zero, no sign). The 2**32 proofs are ``MX_PROOF_PLAN`` (fp8lab prove --plan mx).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.codecs import METHODS, decode, encode
from fp8lab.refs import ScanPolicy, scan_encode, scan_pattern_range, scan_scalar
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import ml_dtypes_type
from fp8lab.specs.formats import FORMATS
from fp8lab.studies.atlas import code_table, rounding_boundaries
from tests.conftest import midpoint_probes

E8M0 = FORMATS["e8m0fnu"]


def _probes(fmt: FormatSpec) -> np.ndarray:
    tiny = float(fmt.smallest_subnormal)
    extra = [0.0, tiny, tiny / 2, tiny * 0.75, float(fmt.max) * 1.75, 3e38, np.inf, 1e-45, 1.0]
    arr = np.array(extra, np.float32)
    return np.concatenate([midpoint_probes(fmt, np.float32), arr, -arr])


def _saturate(fmt: FormatSpec) -> list[bool]:
    return [True, False] if fmt.nan_codes else [True]


def test_decode_every_code_matches_ml_dtypes(mx_fmt: FormatSpec) -> None:
    codes = np.arange(mx_fmt.code_count, dtype=np.uint8)
    ours = decode(codes, mx_fmt, np.float64)
    theirs = codes.view(ml_dtypes_type(mx_fmt)).astype(np.float64)
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize("name", ["e2m1fn", "e2m3fn", "e3m2fn"])
def test_decode_refuses_codes_past_the_format(name: str) -> None:
    fmt = FORMATS[name]
    with pytest.raises(ValueError, match=f"below {fmt.code_count}"):
        decode(np.array([0, fmt.code_count], np.uint8), fmt)


@pytest.mark.parametrize("method", METHODS)
def test_every_finite_code_round_trips(mx_fmt: FormatSpec, method: str) -> None:
    codes = np.arange(mx_fmt.code_count, dtype=np.uint8)
    values = decode(codes, mx_fmt, np.float32)
    finite = np.isfinite(values)
    for saturate in _saturate(mx_fmt):
        again = encode(values[finite], mx_fmt, saturate=saturate, nan="keep-sign", method=method)
        assert np.array_equal(again, codes[finite])


@pytest.mark.parametrize("method", METHODS)
def test_twins_scan_and_ml_dtypes_agree_on_probes(mx_fmt: FormatSpec, method: str) -> None:
    x = _probes(mx_fmt)
    for saturate in _saturate(mx_fmt):
        ours = encode(x, mx_fmt, saturate=saturate, nan="keep-sign", method=method)
        assert np.array_equal(ours, scan_encode(x, mx_fmt, ScanPolicy(saturate, True)))
    # ml_dtypes 0.7 saturates exactly where the format has neither inf nor NaN.
    theirs = x.astype(ml_dtypes_type(mx_fmt)).view(np.uint8)
    ours = encode(x, mx_fmt, saturate=not mx_fmt.nan_codes, nan="keep-sign", method=method)
    assert np.array_equal(ours, theirs)


@pytest.mark.slow
def test_three_evaluations_of_the_scan_agree(mx_fmt: FormatSpec) -> None:
    x = _probes(mx_fmt)
    for saturate in _saturate(mx_fmt):
        policy = ScanPolicy(saturate, True)
        literal = np.array([scan_scalar(float(v), mx_fmt, policy) for v in x], np.uint8)
        assert np.array_equal(scan_encode(x, mx_fmt, policy), literal)
        patterns = x.view(np.uint32).astype(np.int64)
        by_range = [scan_pattern_range(int(p), int(p) + 1, mx_fmt, policy)[0] for p in patterns]
        assert np.array_equal(np.array(by_range, np.uint8), literal)


def test_no_nan_code_means_nan_input_and_nosat_are_refused() -> None:
    for name in ("e2m1fn", "e2m3fn", "e3m2fn"):
        with pytest.raises(ValueError, match="no NaN code"):
            encode(np.array([1.0, np.nan], np.float32), name)
        with pytest.raises(ValueError, match="saturate=True"):
            encode(np.array([1.0], np.float32), name, saturate=False)
        with pytest.raises(ValueError, match="no NaN code"):
            scan_scalar(float("nan"), FORMATS[name], ScanPolicy(True, True))
        with pytest.raises(ValueError, match="NaN patterns"):
            scan_pattern_range(0x7F80_0000, 0x7F80_0002, FORMATS[name], ScanPolicy(True, True))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_a_nan_anywhere_in_any_input_dtype_is_refused_by_a_format_without_nan(dtype: str) -> None:
    # The check is a max for numpy's floats (NaN wherever an element is) and an
    # element-wise isnan for bfloat16: a NaN at each end and inside, a NaN alone, none.
    as_dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    for at in (0, 7, 39):
        x = np.linspace(-3.0, 3.0, 40).astype(as_dtype)
        x[at] = np.nan
        with pytest.raises(ValueError, match="no NaN code"):
            encode(x, "e2m1fn")
    with pytest.raises(ValueError, match="no NaN code"):
        encode(np.array(np.nan, as_dtype), "e2m1fn")
    assert encode(np.linspace(-3.0, 3.0, 40).astype(as_dtype), "e2m1fn").size == 40
    assert encode(np.zeros(0, as_dtype), "e2m1fn", method="array").size == 0


def test_e8m0_zero_negative_ties_and_extremes() -> None:
    x = np.array([0.0, -0.0, -1.0, 1.5, 3.0, 2.0**-127, 2.0**-149, 2.0**127, 3e38], np.float32)
    # ±0 and negatives have no code (NaN); ties go to the larger power of two;
    # below 2**-127 rounds up to it; past 1.5 * 2**127 overflows.
    want_sat = [0xFF, 0xFF, 0xFF, 128, 129, 0, 0, 254, 254]
    want_nosat = [*want_sat[:-1], 0xFF]
    for method in METHODS:
        assert encode(x, E8M0, saturate=True, method=method).tolist() == want_sat
        assert encode(x, E8M0, saturate=False, method=method).tolist() == want_nosat
    assert encode(np.array([-np.inf], np.float32), E8M0, saturate=True).tolist() == [0xFF]


def test_atlas_reads_the_mx_fields() -> None:
    rows = code_table(FORMATS["e2m1fn"])
    assert len(rows) == 16 and [r.kind for r in rows[:3]] == ["zero", "subnormal", "normal"]
    e8m0 = code_table(E8M0)
    assert e8m0[0].kind == "normal" and e8m0[0].value == 2.0**-127 and e8m0[255].kind == "nan"
    assert all(b.tie_to == b.upper for b in rounding_boundaries(E8M0))
