from __future__ import annotations

import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.kernels import f32_to_fp8
from fp8lab.specs.formats import FORMATS
from tests.conftest import midpoint_probes, special_probes

E4M3 = FORMATS["e4m3fn"]


def test_port_matches_fast_codec_on_probes_and_a_dense_chunk() -> None:
    probes = np.concatenate(
        [midpoint_probes(E4M3, np.float32), special_probes(E4M3).astype(np.float32)]
    )
    dense = np.arange(0x3B00_0000, 0x3B00_0000 + (1 << 18), dtype=np.uint32)
    x = np.concatenate([probes, np.concatenate([dense, dense | 0x8000_0000]).view(np.float32)])
    assert np.array_equal(f32_to_fp8(x), encode(x, E4M3, saturate=True, nan="canonical"))


def test_documented_special_behaviour() -> None:
    x = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 448.0, 1e30, -0.0, 0.0, 2.0**-10, -(2.0**-6 - 2.0**-14)],
        np.float32,
    )  # subnormal branch rounds to 8: 0x08
    assert f32_to_fp8(x).tolist() == [0x7F, 0x7F, 0x7E, 0xFE, 0x7E, 0x7E, 0x80, 0x00, 0x00, 0x88]


def test_port_takes_float32_only_and_keeps_shape() -> None:
    with pytest.raises(TypeError, match="float32"):
        f32_to_fp8(np.ones(3))  # type: ignore[arg-type]
    assert f32_to_fp8(np.ones((2, 0), np.float32)).shape == (2, 0)
    assert f32_to_fp8(np.ones((3, 4), np.float32)[:, ::2]).shape == (3, 2)
