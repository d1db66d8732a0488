"""exact_acc works over K in blocks, so its memory does not grow with K."""

from __future__ import annotations

import tracemalloc

import numpy as np

from fp8lab.refs.gemm_exact import exact_acc, exact_acc_units


def _codes(rows: int, k: int, seed: int) -> np.ndarray:
    codes = np.random.default_rng(seed).integers(0, 256, (rows, k), dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0  # no NaN codes
    return codes


def _peak(fn: object, *args: object) -> tuple[np.ndarray, int]:
    tracemalloc.start()
    try:
        out = fn(*args)  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def test_exact_acc_memory_is_bounded_in_k() -> None:
    k = 1 << 18  # int64 units path; a whole-K copy would be 8 * 16 * K = 32 MiB
    a, b = _codes(8, k, 1), _codes(8, k, 2)
    got, peak = _peak(exact_acc, a, b)
    assert peak < (12 << 20), f"exact_acc peak {peak} bytes at K={k}"
    units, peak_u = _peak(exact_acc_units, a, b)
    assert peak_u < (12 << 20), f"exact_acc_units peak {peak_u} bytes at K={k}"
    # the blocked sum equals the exact integer sum, computed a slow independent way
    row = sum(int(x) * int(y) for x, y in zip(_units(a[0]), _units(b[3]), strict=True))
    assert int(units[0, 3]) == row
    assert got[0, 3] == float(np.ldexp(float(row), -18))


def test_exact_acc_small_k_matches_float64_blas() -> None:
    a, b = _codes(5, 300, 3), _codes(4, 300, 4)
    want = _values(a) @ _values(b).T
    assert exact_acc(a, b).tobytes() == want.tobytes()


def _units(codes: np.ndarray) -> list[int]:
    """Each code's exact value in units of 2**-9, read from the format's 256 exact values."""
    from fp8lab.specs.formats import FORMATS

    fmt = FORMATS["e4m3fn"]
    table = [int(fmt.exact_value(c) * 512) if not fmt.is_nan_code(c) else 0 for c in range(256)]
    return [table[c] for c in codes.tolist()]


def _values(codes: np.ndarray) -> np.ndarray:
    return np.array([[u / 512 for u in _units(row)] for row in codes], np.float64)
