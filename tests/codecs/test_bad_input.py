from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab import decode, encode
from fp8lab.codecs import codec_nan_policy, special_codes
from fp8lab.specs.formats import FORMATS


@pytest.mark.parametrize(
    "bad",
    [
        np.array([1, 2]),
        np.array([True]),
        np.array([1 + 2j]),
        np.array(["a"]),
        np.array([1.0], dtype=object),
        np.array([1.0], ml_dtypes.float8_e4m3fn),
    ],
)
def test_wrong_dtype_is_a_type_error(bad: np.ndarray) -> None:
    with pytest.raises(TypeError, match="cannot encode dtype"):
        encode(bad)


def test_unknown_policy_format_method_engine() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="NaN policy"):
        encode(x, nan="positive")
    with pytest.raises(ValueError, match="unknown format"):
        encode(x, "e2m1")
    with pytest.raises(ValueError, match="unknown method"):
        encode(x, method="magic")
    with pytest.raises(ValueError, match="engine"):
        encode(x, engine="cuda")
    with pytest.raises(TypeError, match="saturate"):
        encode(x, saturate=1)  # type: ignore[arg-type]
    assert codec_nan_policy("keep-sign").name == "keep-sign"


def test_empty_and_zero_d_keep_their_shape() -> None:
    assert encode(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert encode(np.float32(1.0)).shape == ()
    assert decode(np.zeros(0, np.uint8)).shape == (0,)


def test_non_contiguous_and_big_endian_inputs_are_not_mutated() -> None:
    base = np.linspace(-500, 500, 64, dtype=np.float32).reshape(8, 8)
    view = base[:, ::2]
    before = base.copy()
    assert np.array_equal(encode(view), encode(np.ascontiguousarray(view)))
    assert np.array_equal(base, before)
    big = base.astype(">f4")
    assert np.array_equal(encode(big), encode(base))


def test_special_inputs_have_defined_codes() -> None:
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 1e-45, -1e-45], np.float32)
    assert encode(x).tolist() == [0x7F, 0x7F, 0x7E, 0xFE, 0x80, 0x00, 0x80]


def test_decode_refuses_wrong_types() -> None:
    with pytest.raises(TypeError, match="uint8"):
        decode(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="uint8"):
        decode(np.zeros(2, np.uint8).view(ml_dtypes.float8_e5m2), "e4m3fn")
    with pytest.raises(TypeError, match="float32 or float64"):
        decode(np.zeros(2, np.uint8), dtype=np.float16)


def test_special_code_table_for_each_policy() -> None:
    e4 = FORMATS["e4m3fn"]
    assert special_codes(e4, saturate=False, nan="keep-sign").overflow == (0x7F, 0xFF)
    assert special_codes(e4, saturate=False, nan="canonical").overflow == (0x7F, 0x7F)
    assert special_codes(e4, saturate=True, nan="canonical").inf == (0x7E, 0xFE)
    fnuz = FORMATS["e4m3fnuz"]
    assert special_codes(fnuz, saturate=True, nan="keep-sign").zero == (0, 0)
    assert special_codes(fnuz, saturate=True, nan="keep-sign").nan == (0x80, 0x80)
