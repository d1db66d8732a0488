from __future__ import annotations

import numpy as np
import pytest

from fp8lab.codecs import METHODS, as_ml_dtypes, decode, encode
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.format_dtypes import ml_dtypes_type


def test_decode_is_exact_and_matches_ml_dtypes(fmt: FormatSpec) -> None:
    codes = np.arange(256, dtype=np.uint8)
    ours = decode(codes, fmt, np.float64)
    theirs = codes.view(ml_dtypes_type(fmt)).astype(np.float64)
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))
    for c in range(256):
        if not np.isnan(ours[c]) and not np.isinf(ours[c]):
            assert ours[c] == float(fmt.exact_value(c))
    assert np.array_equal(decode(codes, fmt, np.float32), ours.astype(np.float32), equal_nan=True)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_code_round_trips(fmt: FormatSpec, method: str, dtype: type) -> None:
    codes = np.arange(256, dtype=np.uint8)
    values = decode(codes, fmt, dtype)
    finite = np.isfinite(values)
    for saturate in (True, False):
        again = encode(values[finite], fmt, saturate=saturate, nan="keep-sign", method=method)
        assert np.array_equal(again, codes[finite])
    nan_codes = encode(values[np.isnan(values)], fmt, saturate=True, nan="keep-sign", method=method)
    assert set(nan_codes.tolist()) <= set(fmt.nan_codes)


def test_as_ml_dtypes_views_without_copy(fmt: FormatSpec) -> None:
    codes = encode(np.array([1.0, -2.0, 0.5], np.float32), fmt)
    view = as_ml_dtypes(codes, fmt)
    assert view.dtype == ml_dtypes_type(fmt)
    assert np.shares_memory(view, codes)
    assert view.astype(np.float32).tolist() == [1.0, -2.0, 0.5]
    assert np.array_equal(decode(view, fmt), [1.0, -2.0, 0.5])
