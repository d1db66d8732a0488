"""Boundary probes: one test body runs every twin and checks it against the scan reference."""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fp8lab.codecs import METHODS, encode
from fp8lab.refs import ScanPolicy, scan_encode, scan_scalar
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS
from tests.conftest import CODEC_POLICIES, midpoint_probes, scan_policy, special_probes

POLICIES = CODEC_POLICIES
E4M3 = FORMATS["e4m3fn"]


@functools.cache
def _probes_and_scan(
    fmt: FormatSpec, saturate: bool, nan: str, dtype: type
) -> tuple[np.ndarray, np.ndarray]:
    """The probes and their scan codes, once per format, policy and dtype (not per method).

    The array scan is held to the literal scalar scan here, value by value.
    """
    x = np.concatenate([midpoint_probes(fmt, dtype), special_probes(fmt).astype(dtype)])
    policy = scan_policy(saturate, nan)
    want = scan_encode(x, fmt, policy)
    literal = np.array([scan_scalar(float(v), fmt, policy) for v in x], np.uint8)
    assert np.array_equal(want, literal)
    return x, want


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("saturate", "nan"), POLICIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_midpoints_and_neighbours_match_scan(
    fmt: FormatSpec, method: str, saturate: bool, nan: str, dtype: type
) -> None:
    x, want = _probes_and_scan(fmt, saturate, nan, dtype)
    got = encode(x, fmt, saturate=saturate, nan=nan, method=method)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("method", METHODS)
def test_e4m3fn_named_boundaries(method: str) -> None:
    cases = [
        (448.0, 0x7E),
        (464.0, 0x7E),
        (-464.0, 0xFE),
        (448.5, 0x7E),
        (2.0**-10, 0x00),
        (-(2.0**-10), 0x80),
        (2.0**-10 * 1.0000001, 0x01),
        (3 * 2.0**-10, 0x02),
        (0.0, 0x00),
        (-0.0, 0x80),
        (2.0**-9, 0x01),
        (1.0625, 0x38),
        (1.1875, 0x3A),
    ]
    x = np.array([v for v, _ in cases], np.float64)
    assert encode(x, E4M3, method=method).tolist() == [c for _, c in cases]


@pytest.mark.parametrize("method", METHODS)
def test_overflow_policies(method: str) -> None:
    x = np.array([464.0001, 480.0, 1e9, np.inf, -np.inf, np.nan, -np.nan], np.float64)
    sat = encode(x, E4M3, saturate=True, nan="keep-sign", method=method)
    assert sat.tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0xFF]
    nosat = encode(x, E4M3, saturate=False, nan="canonical", method=method)
    assert nosat.tolist() == [0x7F] * 7
    e5m2 = encode(
        np.array([61440.0, -61440.0, 61439.0, np.inf]), "e5m2", saturate=False, method=method
    )
    assert e5m2.tolist() == [0x7C, 0xFC, 0x7B, 0x7C]
    fnuz = encode(np.array([248.0, 247.9, -0.0, -1e-30]), "e4m3fnuz", saturate=False, method=method)
    assert fnuz.tolist() == [0x80, 0x7F, 0x00, 0x00]


@pytest.mark.parametrize("method", METHODS)
def test_float64_is_rounded_once(method: str) -> None:
    # Each value lies just off an e4m3 tie; rounding through float32 first lands on it.
    ties = [1.0625, 1.1875, 2.0**-10, 3 * 2.0**-10, 464.0]
    above = np.array([t * (1 + 2.0**-40) for t in ties])
    below = np.array([t * (1 - 2.0**-40) for t in ties])
    assert np.all(above.astype(np.float32) == np.array(ties, np.float32))
    for x in (above, below):
        got = encode(x, E4M3, saturate=False, nan="keep-sign", method=method)
        once = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        assert np.array_equal(got, once)
        twice = encode(x.astype(np.float32), E4M3, saturate=False, nan="keep-sign", method=method)
        assert not np.array_equal(got, twice)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True, width=64))
@example(1.0625 + 2.0**-30)
@example(-(2.0**-10))
@example(5e-324)
@example(1.7976931348623157e308)
def test_random_float64_twins_agree(v: float) -> None:
    x = np.array([v], np.float64)
    for fmt in FORMATS.values():
        for saturate, nan in POLICIES:
            if not fmt.nan_codes and (np.isnan(v) or not saturate):
                with pytest.raises(ValueError, match=r"NaN|saturate"):
                    encode(x, fmt, saturate=saturate, nan=nan)
                continue
            results = {m: encode(x, fmt, saturate=saturate, nan=nan, method=m) for m in METHODS}
            want = scan_encode(x, fmt, scan_policy(saturate, nan))
            for method, got in results.items():
                assert np.array_equal(got, want), (method, fmt.name, saturate, nan)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_fast_engines_agree_on_a_dense_chunk(engine: str) -> None:
    bits = np.arange(0x3F00_0000, 0x3F00_0000 + (1 << 20), dtype=np.uint32)
    x = np.concatenate([bits, bits | 0x8000_0000]).view(np.float32)
    got = encode(x, E4M3, engine=engine)
    assert np.array_equal(got, scan_encode(x, E4M3, ScanPolicy(True, False)))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("nan", "codes"),
    [
        ("canonical", (0x7E, 0x7E)),
        ("keep-sign", (0x7E, 0xFE)),
        ("all-ones", (0x7F, 0x7F)),  # PTX cvt.rn.satfinite.e5m2x2.f32
        ("keep-sign-all-ones", (0x7F, 0xFF)),  # torch's CPU cast
    ],
)
def test_e5m2_nan_codes_of_each_policy(method: str, nan: str, codes: tuple[int, int]) -> None:
    x = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], np.uint32).view(np.float32)
    got = encode(x, FORMATS["e5m2"], saturate=True, nan=nan, method=method)
    assert got.tolist() == [codes[0], codes[1], codes[0], codes[1]]
