from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from fp8lab.detect import KernelError, brute_force, enumerate_exposing, resolve_kernel
from fp8lab.kernels import FunctionKernel, quant_static
from fp8lab.sweeps.range_run import RangeRun

S = 0.0092
LO, HI = 0x3B000000, 0x3B800000  # around 2**-9: the low midpoints times s = 0.0092


def test_restricted_range_matches_enumeration_and_classifies() -> None:
    record = brute_force(S, run=RangeRun(start=LO, stop=HI, chunk=2**21, workers=1))
    want = [v for v in enumerate_exposing(S).inputs if LO <= int(v, 16) < HI]
    assert list(record.inputs) == want and record.count == len(want) > 0
    assert record.examined == HI - LO
    for c in record.classes:
        assert c.on_midpoint in ("divide", "reciprocal")
        assert c.range in ("subnormal", "normal")
    row = json.loads(record.to_json())
    assert row["scale_hex"] == float(np.float32(S)).hex() and row["count"] == record.count


def test_any_executor_and_kernel_objects() -> None:
    a = FunctionKernel("quant_static", quant_static)
    with ThreadPoolExecutor(2) as pool:
        record = brute_force(
            S, a, "tests.defects:divide", run=RangeRun(start=LO, stop=HI, executor=pool)
        )
    assert record.a == "quant_static" and record.b == "tests.defects:divide"
    assert list(record.inputs) == list(
        brute_force(S, run=RangeRun(start=LO, stop=HI, workers=1)).inputs
    )


def test_identical_kernels_expose_nothing() -> None:
    record = brute_force(
        0.13, "divide", "divide", run=RangeRun(start=LO, stop=LO + 2**20, workers=1)
    )
    assert record.count == 0 and record.examined == 2**20


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        (0.0, "not positive"),
        (-1.0, "not positive"),
        (float("nan"), "not finite"),
        (float("inf"), "not finite"),
        (1e-40, "smallest normal"),
        (2.0**127, r"2\*\*126"),
    ],
)
def test_bad_scales_are_refused(scale: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        brute_force(scale, run=RangeRun(start=0, stop=16, workers=1))
    with pytest.raises(ValueError, match=message):
        enumerate_exposing(scale)


def test_bad_ranges_and_kernels_are_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        brute_force(S, run=RangeRun(start=5, stop=5, workers=1))
    with pytest.raises(ValueError, match="no candidate"):
        enumerate_exposing(S, start=0, stop=16)
    with pytest.raises(KernelError, match="unknown kernel"):
        brute_force(S, "nope", run=RangeRun(start=0, stop=16, workers=1))
    with pytest.raises(KernelError, match="cannot import"):
        resolve_kernel("no_such_module:f")


def test_reciprocal_kernel_is_quant_static() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 2**16, dtype=np.uint32).view(np.float32)
    for s in (0.0092, 3.0, 0.77):
        with np.errstate(invalid="ignore", over="ignore"):  # quant_static warns on NaN input
            want = quant_static(x, s)
        assert np.array_equal(resolve_kernel("reciprocal").quantize(x, s), want)
