"""Encode validates ``engine`` everywhere, keeps 0-d shapes, and encodes float64
in blocks so memory stays bounded."""

from __future__ import annotations

import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from fp8lab import encode


@pytest.mark.parametrize(
    ("dtype", "method"),
    [
        (ml_dtypes.bfloat16, "fast"),
        (np.float64, "fast"),
        (np.float32, "array"),
        (np.float32, "scalar"),
        (np.float16, "array"),
    ],
)
def test_unknown_engine_is_refused_on_every_path(dtype: type, method: str) -> None:
    x = np.array([0.5, 1.0], dtype)
    with pytest.raises(ValueError, match="engine 'cuda'"):
        encode(x, method=method, engine="cuda")


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float32, np.float64, np.float16])
@pytest.mark.parametrize("method", ["fast", "array", "scalar"])
def test_zero_d_input_gives_a_zero_d_uint8_array(dtype: type, method: str) -> None:
    got = encode(np.array(1.0, dtype), method=method)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.uint8
    assert int(got) == 0x38


@pytest.mark.parametrize("method", ["fast", "array"])
def test_float64_encode_memory_is_bounded_by_blocks(method: str) -> None:
    """Peak extra memory is a few blocks, not tens of bytes per element."""
    n = 1 << 21  # 16 MiB of float64 input
    x = np.random.default_rng(7).standard_normal(n) * 300.0
    want = encode(x[: 1 << 12], method="scalar")
    tracemalloc.start()
    try:
        got = encode(x, method=method)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.tobytes()[: 1 << 12] == want.tobytes()
    # the output itself is n bytes; anything per-element beyond ~2 bytes is unbounded work
    assert peak < n + (8 << 20), f"peak {peak} bytes for {n} elements"


@pytest.mark.parametrize("method", ["fast", "array"])
def test_blocked_encode_keeps_signalling_nans_quiet_and_nan(method: str) -> None:
    snan = np.array([0x7F800001, 0xFF800001], np.uint32).view(np.float32)
    got = encode(snan, method=method, nan="keep-sign", fmt="e5m2")
    assert got.tolist() == encode(snan, method="scalar", nan="keep-sign", fmt="e5m2").tolist()
