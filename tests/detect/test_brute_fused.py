"""The fused brute-force loop equals its numpy twin bit for bit."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from fp8lab.detect import brute_force, exposing_fused, use_fused
from fp8lab.detect.brute import exposing_in_chunk
from fp8lab.detect.fused import _fused_loop, fused_table, runs_per_sign
from fp8lab.kernels import FunctionKernel, quant_static
from fp8lab.specs.formats import FP8_FORMATS
from fp8lab.sweeps.range_run import RangeRun
from tests.detect.fused_twin import twin_mismatches

SCALES = (0.9, 3.0, 1e-3, 448 / 3, 0.0092, 2.0**-126, 1.7 * 2.0**125, 2.0)


@pytest.mark.parametrize("fmt", sorted(FP8_FORMATS))
def test_fused_equals_twin_where_it_matters(fmt: str) -> None:
    exposing = 0
    for scale in SCALES:
        examined, found, bad = twin_mismatches(fmt, scale)
        assert examined > 0 and bad == [], (fmt, scale, [f"{lo:#x}" for lo, _ in bad])
        exposing += found
    assert exposing > 0  # the ranges hold exposing inputs: the comparison is not vacuous


@pytest.mark.parametrize(("a", "b"), [("divide", "reciprocal"), ("divide", "divide")])
def test_fused_equals_twin_for_every_order(a: str, b: str) -> None:
    for scale in (0.9, 448 / 3):
        examined, _, bad = twin_mismatches("e4m3fn", scale, a, b)
        assert examined > 0 and bad == []


def test_fused_equals_twin_on_seeded_wide_ranges() -> None:
    rng = np.random.default_rng(13)
    for lo in rng.integers(0, 2**32 - 2**20, 4):
        lo = int(lo)
        scale = float(np.float32(np.exp2(rng.uniform(-12, 12))))
        fused = exposing_fused("reciprocal", "divide", "e4m3fn", scale, lo, lo + 2**20)
        twin = exposing_in_chunk("reciprocal", "divide", "e4m3fn", scale, lo, lo + 2**20)
        assert fused.tobytes() == twin.tobytes()


@pytest.mark.parametrize("workers", [1, 2])
def test_records_identical_between_engines(workers: int) -> None:
    lo, hi = 0x3B000000, 0x3B800000  # the low midpoints times s = 0.0092
    kw = {"start": lo, "stop": hi, "chunk": 2**21}
    fused = brute_force(0.0092, engine="fused", run=RangeRun(workers=workers, **kw))  # 2: threads
    twin = brute_force(0.0092, engine="numpy", run=RangeRun(workers=1, **kw))
    assert fused.count > 0
    strip = {"wall_seconds": 0.0}
    assert (
        dataclasses.replace(fused, **strip).to_json()
        == dataclasses.replace(twin, **strip).to_json()
    )


def test_engine_choice() -> None:
    assert use_fused("reciprocal", "divide", "auto")
    assert not use_fused("reciprocal", "divide", "numpy")
    kernel = FunctionKernel("quant_static", quant_static)
    assert not use_fused(kernel, "divide", "auto")
    assert not use_fused("tests.defects:divide", "divide", "auto")
    with pytest.raises(ValueError, match="fused engine runs only"):
        use_fused("tests.defects:divide", "divide", "fused")
    with pytest.raises(ValueError, match="unknown brute-force engine"):
        use_fused("reciprocal", "divide", "numba")
    with pytest.raises(ValueError, match="fused engine runs only"):
        exposing_fused(kernel, "divide", "e4m3fn", 0.5, 0, 16)


@pytest.mark.parametrize("engine", ["fused", "numpy"])
def test_cli_engine_flag(engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    from fp8lab.cli.main import main

    argv = ["detect", "--method", "brute", "--scales", "0.0092", "--quiet", "--workers", "1"]
    argv += ["--start", "0x3B000000", "--stop", "0x3B100000", "--engine", engine, "--json", "-"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    entry = json.loads(out[out.index("{") :])["entries"][0]
    assert entry["count"] > 0 and entry["examined"] == 0x100000


def test_cli_fused_engine_refuses_a_foreign_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    from fp8lab.cli.main import main

    argv = ["detect", "--method", "brute", "--scales", "0.5", "--engine", "fused"]
    assert main([*argv, "--kernels", "reciprocal,tests.defects:divide"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--engine fused runs only" in err[0]


@pytest.mark.parametrize("scale", [0.9, 8.507059173023462e37, 1.1754943508222875e-38, 807403.5])
def test_skipped_blocks_hold_no_exposing_input(scale: float) -> None:
    # the loop with its block skip equals the loop that computes every block
    table = fused_table("e4m3fn")
    assert runs_per_sign(table)
    s = np.float32(scale)
    r = np.float32(np.float32(1.0) / s)
    for lo in (0x00000000, 0x3F000000, 0x7F400000, 0x80400000, 0xBB000000):
        args = (lo, lo + (1 << 20), r, s, False, True, table)
        assert _fused_loop(*args, True).tobytes() == _fused_loop(*args, False).tobytes()
