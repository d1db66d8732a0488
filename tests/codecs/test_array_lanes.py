"""The array twin's two layouts: float32 bits in 32-bit lanes give float64's codes.

Every format and policy, on windows at both ends of every format's range: the
float32 subnormals, the format's bottom binades, its top, ±inf and the NaNs.
"""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.codecs.policy import special_codes
from fp8lab.codecs.rne_array import (
    _FLOAT32,
    _OPERAND_MAX,
    _encode,
    encode_float32,
    encode_float64,
)
from fp8lab.specs.formats import FORMATS

NAN_POLICIES = ("canonical", "keep-sign", "all-ones", "keep-sign-all-ones")


def _windows(minexp: int, top: float) -> np.ndarray:
    bottom = int(np.float32(2.0**minexp).view(np.uint32))
    high = int(np.float32(top).view(np.uint32))
    starts = [
        0,
        0x007F_C000,
        bottom - (1 << 13),
        high - (1 << 13),
        0x7F80_0000 - (1 << 10),
        0x7FFF_F000,
    ]
    bits = np.concatenate(
        [np.arange(s, s + (1 << 12) if s > 0x7F00_0000 else s + (1 << 14)) for s in starts]
    )
    bits = np.unique(np.clip(bits, 0, 0x7FFF_FFFF)).astype(np.uint32)
    return np.concatenate([bits, bits | np.uint32(0x8000_0000)]).view(np.float32)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_float32_lanes_give_the_float64_lanes_codes(name: str) -> None:
    fmt = FORMATS[name]
    x = _windows(fmt.minexp, float(fmt.max))
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    for saturate in (True, False):
        for nan in NAN_POLICIES:
            try:
                codes = special_codes(fmt, saturate=saturate, nan=nan)
            except ValueError:
                continue
            got, want = encode_float32(x, fmt, codes), encode_float64(wide, fmt, codes)
            assert got.tobytes() == want.tobytes(), (name, saturate, nan)


def test_a_bottom_binade_below_float32_s_normals_would_be_wrong_in_32_bit_lanes() -> None:
    # e8m0fnu's 2**-127 lies among the float32 subnormals, which 32-bit lanes take in the
    # quantum of 2**-126: the twin rounds such a format from float64 bits instead.
    fmt = FORMATS["e8m0fnu"]
    codes = special_codes(fmt, saturate=True, nan="canonical")
    x = np.arange(0x0040_0000, 0x0080_0000, 4096, dtype=np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        want = encode_float64(x.astype(np.float64), fmt, codes)
    assert encode_float32(x, fmt, codes).tobytes() == want.tobytes()
    assert (_encode(x.view(np.int32), fmt, codes, _FLOAT32) != want).any()


@pytest.mark.parametrize("name", ["e4m3fn", "e2m1fn", "e8m0fnu"])
def test_an_array_past_the_operand_cap_gets_the_codes_of_its_pieces(name: str) -> None:
    # The bounds take a cached contiguous operand up to _OPERAND_MAX lanes and the scalar
    # beyond it: the same codes either way, on mixed signs, specials and every binade.
    fmt = FORMATS[name]
    codes = special_codes(fmt, saturate=True, nan="canonical")
    rng = np.random.default_rng(41)
    bits = rng.integers(0, 1 << 32, _OPERAND_MAX + 4099, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    if not fmt.nan_codes:
        x = x[~np.isnan(x)]
    with np.errstate(invalid="ignore"):
        for encode, values in ((encode_float32, x), (encode_float64, x.astype(np.float64))):
            assert values.size > _OPERAND_MAX
            whole = encode(values, fmt, codes)
            pieces = [encode(values[i : i + 4096], fmt, codes) for i in range(0, values.size, 4096)]
            assert whole.tobytes() == np.concatenate(pieces).tobytes(), (name, encode.__name__)


def test_an_empty_array_gives_no_codes_in_either_lane_width() -> None:
    fmt = FORMATS["e4m3fn"]
    codes = special_codes(fmt, saturate=True, nan="canonical")
    assert encode_float32(np.zeros(0, np.float32), fmt, codes).shape == (0,)
    assert encode_float64(np.zeros((0, 3), np.float64), fmt, codes).shape == (0, 3)
