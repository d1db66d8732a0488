from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fp8lab.specs.format import FormatSpec, NanEncoding
from fp8lab.specs.format_dtypes import INPUT_DTYPES, input_dtype, is_bfloat16, ml_dtypes_type
from fp8lab.specs.formats import FORMATS, FP8_FORMATS, get_format

FRACTION_PROPS = ("max", "min", "eps", "epsneg", "smallest_normal", "tiny", "smallest_subnormal")
INT_PROPS = ("bits", "nexp", "nmant", "iexp", "minexp", "maxexp", "machep", "negep")


def test_every_derived_property_matches_ml_dtypes_finfo(fmt: FormatSpec) -> None:
    finfo = ml_dtypes.finfo(ml_dtypes_type(fmt))
    checked = 0
    for name in FRACTION_PROPS:
        assert float(getattr(fmt, name)) == float(getattr(finfo, name)), name
        checked += 1
    for name in INT_PROPS:
        assert getattr(fmt, name) == int(getattr(finfo, name)), name
        checked += 1
    assert checked == len(FRACTION_PROPS) + len(INT_PROPS)


def test_catalogue_names_and_layout_facts() -> None:
    assert list(FP8_FORMATS) == ["e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz"]
    assert list(FORMATS) == [*FP8_FORMATS, "e8m0fnu", "e2m3fn", "e3m2fn", "e2m1fn"]
    e4m3 = FORMATS["e4m3fn"]
    # OFP8: 127 distinct finite magnitudes (zero, 7 subnormals, 119 normals).
    assert e4m3.finite_magnitude_count == 127
    assert e4m3.max_code == 0x7E and e4m3.canonical_nan_code == 0x7F
    assert e4m3.nan_codes == {0x7F, 0xFF}
    assert FORMATS["e5m2"].inf_code == 0x7C
    assert FORMATS["e5m2"].nan_codes == {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}
    assert FORMATS["e4m3fnuz"].nan_codes == {0x80}
    assert float(FORMATS["e4m3fnuz"].max) == 240.0


def test_special_codes_agree_with_ml_dtypes(fmt: FormatSpec) -> None:
    n = fmt.code_count
    codes = np.arange(n, dtype=np.uint8).view(ml_dtypes_type(fmt)).astype(np.float64)
    assert {c for c in range(n) if np.isnan(codes[c])} == set(fmt.nan_codes)
    inf_codes = {c for c in range(n) if np.isinf(codes[c])}
    want = set() if fmt.inf_code is None else {fmt.inf_code, fmt.inf_code | fmt.sign_bit}
    assert inf_codes == want
    finite = [c for c in range(n) if np.isfinite(codes[c])]
    assert [float(fmt.exact_value(c)) for c in finite] == [codes[c] for c in finite]


def test_mx_layout_facts() -> None:
    """OCP MX v1.0 element (FP6, FP4) and scale (E8M0) data types, transcribed."""
    e8m0 = FORMATS["e8m0fnu"]
    assert (e8m0.bits, e8m0.sign_bit, e8m0.code_count) == (8, 0, 256)
    assert e8m0.exact_value(0) == Fraction(1, 2**127) and e8m0.exact_value(254) == 2**127
    assert e8m0.nan_codes == {0xFF} and not e8m0.has_zero
    assert e8m0.finite_magnitude_count == 255
    fp4 = FORMATS["e2m1fn"]
    assert [fp4.exact_value(c) for c in range(8)] == [
        0,
        Fraction(1, 2),
        1,
        Fraction(3, 2),
        2,
        3,
        4,
        6,
    ]
    assert fp4.nan_codes == frozenset() and fp4.inf_code is None and fp4.code_count == 16
    assert float(FORMATS["e2m3fn"].max) == 7.5 and float(FORMATS["e3m2fn"].max) == 28.0
    assert FORMATS["e2m3fn"].canonical_nan_code is None
    assert set(FP8_FORMATS) == {f for f in FORMATS if FORMATS[f].signed and FORMATS[f].bits == 8}


def test_inconsistent_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="IEEE"):
        FormatSpec("bad", 4, 3, 7, NanEncoding.ALL_ONES, has_inf=True, has_negative_zero=True)
    with pytest.raises(ValueError, match="-0"):
        FormatSpec("bad", 4, 3, 8, NanEncoding.NEGATIVE_ZERO, has_inf=False, has_negative_zero=True)
    with pytest.raises(ValueError, match="<= 8"):
        FormatSpec("bad", 5, 3, 7, NanEncoding.IEEE, has_inf=True, has_negative_zero=True)
    with pytest.raises(ValueError, match="mantissa bit"):
        FormatSpec("bad", 5, 0, 7, NanEncoding.IEEE, has_inf=True, has_negative_zero=True)
    with pytest.raises(ValueError, match="needs a sign bit and a zero"):
        FormatSpec("bad", 4, 3, 7, NanEncoding.NONE, False, True, has_subnormals=False)
    with pytest.raises(ValueError, match="needs a sign bit"):
        FormatSpec("bad", 4, 3, 8, NanEncoding.NEGATIVE_ZERO, False, False, signed=False)


def test_get_format_errors_name_the_known_ones() -> None:
    assert get_format(FORMATS["e5m2"]) is FORMATS["e5m2"]
    with pytest.raises(ValueError, match="e4m3fn"):
        get_format("e3m4")


def test_exact_value_refuses_special_codes() -> None:
    with pytest.raises(ValueError, match="not finite"):
        FORMATS["e5m2"].exact_value(0x7C)
    with pytest.raises(ValueError, match="not finite"):
        FORMATS["e4m3fn"].exact_value(0xFF)


def test_input_dtypes_by_name() -> None:
    assert [input_dtype(n) for n in INPUT_DTYPES] == [np.dtype(np.float32), ml_dtypes.bfloat16]
    assert is_bfloat16(input_dtype("bfloat16")) and not is_bfloat16(input_dtype("float32"))
    with pytest.raises(ValueError, match="unknown input dtype 'float16'"):
        input_dtype("float16")
