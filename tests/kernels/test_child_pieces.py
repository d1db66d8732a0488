"""An elementwise kernel called in slices by its own process: the same answer as one call.

:func:`fp8lab.kernels.sources.child.serve_in_pieces` cuts a 1-D input into slices, calls the
kernel on each from the reset floating-point environment and joins the answers; an answer
that is not an array of its slice's shape and of one dtype sends the whole input in one call.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.kernels.sources.child import serve_in_pieces
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun

X = np.arange(0x3F00_0000, 0x3F00_0000 + 1000, dtype=np.uint32).view(np.float32)


def _codes(x: np.ndarray) -> np.ndarray:
    return encode(x, "e4m3fn")


@pytest.mark.parametrize("pieces", [1, 7, 256, 999, 1000, 4096])
def test_the_joined_answer_is_the_whole_call_s(pieces: int) -> None:
    calls: list[int] = []

    def kernel(x: np.ndarray) -> np.ndarray:
        calls.append(x.size)
        return _codes(x)

    out, fault, env = serve_in_pieces(kernel, X, pieces)
    assert (fault, env) == ("", "")
    assert out.dtype == np.uint8 and out.tobytes() == _codes(X).tobytes()
    assert calls == [min(pieces, X.size - lo) for lo in range(0, X.size, pieces)]


def test_an_answer_that_is_not_the_slice_s_shape_gets_the_whole_input() -> None:
    seen: list[int] = []

    def per_tensor(x: np.ndarray) -> np.ndarray:  # answers the first slice with its shape only
        seen.append(x.size)
        return _codes(x) if len(seen) == 1 else _codes(x)[:1]

    out, fault, _ = serve_in_pieces(per_tensor, X, 256)
    assert seen == [256, 256, X.size] and fault == ""
    assert out.shape == (1,)  # the whole call's answer stands, for the caller to judge


def test_a_dtype_that_changes_between_slices_gets_the_whole_input() -> None:
    seen: list[int] = []

    def drifting(x: np.ndarray) -> np.ndarray:
        seen.append(x.size)
        return _codes(x).astype(np.uint8 if len(seen) == 1 else np.int64)

    out, fault, _ = serve_in_pieces(drifting, X, 500)
    assert seen == [500, 500, X.size] and fault == "" and out.dtype == np.int64


def test_a_fault_in_a_later_slice_is_the_call_s_fault() -> None:
    def raises_late(x: np.ndarray) -> np.ndarray:
        if x[0] > X[500]:
            raise RuntimeError("boom")
        return _codes(x)

    out, fault, _ = serve_in_pieces(raises_late, X, 400)
    assert out is None and "RuntimeError" in fault and "boom" in fault


def test_each_slice_starts_from_the_reset_environment_and_a_change_is_reported() -> None:
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    modes: list[int] = []

    def leaks(x: np.ndarray) -> np.ndarray:
        modes.append(libm.fegetround())
        libm.fesetround(0xC00)  # toward zero, left set
        return _codes(x)

    try:
        _, fault, env = serve_in_pieces(leaks, X, 300)
    finally:
        libm.fesetround(0)
    assert fault == "" and "rounding" in env
    assert modes == [0, 0, 0, 0]  # every slice began at round to nearest


@pytest.mark.process
def test_a_defect_inside_a_later_slice_of_a_chunk_is_found_in_its_process() -> None:
    # one chunk of 2**21 patterns, the defect (at 1.0) in the middle of its fifth slice
    start = 0x3F80_0000 - 9 * (1 << 17)
    record = run_exhaustive(
        "tests.defects:one_ulp_off_encoder",
        "scan",
        "e4m3fn",
        saturate=True,
        run=RangeRun(start=start, stop=start + (1 << 21), workers=1),
    )
    assert (record.status.value, record.mismatches, record.examined) == ("FAIL", 1, 1 << 21)
    assert record.examples["other"][0]["input"] == "0x3f800000"


def test_a_kernel_that_hands_back_one_buffer_each_call_still_gets_its_codes_joined() -> None:
    buffer = np.empty(X.size, np.uint8)

    def reuses(x: np.ndarray) -> np.ndarray:
        out = buffer[: x.size]
        out[:] = _codes(x)
        return out

    joined, fault, _ = serve_in_pieces(reuses, X, 300)
    assert fault == "" and joined.tobytes() == _codes(X).tobytes()
