"""The bit-field engine equals the table lookup on designed inputs, for every format and policy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.codecs import ENGINES, encode
from fp8lab.refs import ScanPolicy, scan_encode
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS
from tests.codecs.bits_probes import designed_bits, mismatches

pytestmark = pytest.mark.skipif("bits" not in ENGINES, reason="the bits engine needs numba")


def test_bits_equals_the_table_on_designed_inputs(fmt: FormatSpec) -> None:
    assert mismatches(fmt) == []


def test_designed_inputs_reach_every_code_and_the_464_tie() -> None:
    fmt = FORMATS["e4m3fn"]
    x = designed_bits(fmt).view(np.float32)
    assert np.float32(464.0) in x
    codes = encode(x, fmt, saturate=False, nan="keep-sign", engine="bits")
    assert set(codes.tolist()) == set(range(256))


@pytest.mark.parametrize("fmt_name", ["e4m3fn", "e5m2", "e8m0fnu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_encode_engine_bits_matches_scan_for_every_input_dtype(fmt_name: str, dtype: type) -> None:
    fmt = FORMATS[fmt_name]
    with np.errstate(over="ignore", invalid="ignore"):  # narrowing makes inf; NaNs stay NaN
        x = designed_bits(fmt).view(np.float32).astype(dtype)
    got = encode(x, fmt, saturate=True, nan="keep-sign", engine="bits")
    with np.errstate(invalid="ignore"):
        want = scan_encode(x.astype(np.float32), fmt, ScanPolicy(True, True))
    assert np.array_equal(got, want)
    assert got.shape == x.shape


def test_bits_keeps_the_shape_of_a_2d_input() -> None:
    x = np.linspace(-500, 500, 60, dtype=np.float32).reshape(6, 10)
    assert np.array_equal(encode(x, engine="bits"), encode(x, engine="numba"))
