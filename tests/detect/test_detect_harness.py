"""The detect harness: one verdict in both orders, honest completeness, broken kernels named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.detect import brute_force, enumerate_exposing
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.sweeps.range_run import RangeRun
from tests.in_process import assert_one_kernel_error_line

pytestmark = pytest.mark.process

M = "tests.meta.foreign_kernels"
ROOT = Path(__file__).resolve().parents[2]
AROUND_ONE = {"start": 0x3F80_0000, "stop": 0x3FA0_0000}  # 1.0 .. 1.25
# 2^16 patterns either side of 1.0625, where x / 0.5 crosses e4m3fn's midpoint 2.125: a kernel
# that clips x > 1 differs above it, and a record of 2^16 exposing inputs is quick to build
ACROSS_A_MIDPOINT = {"start": 0x3F87_0000, "stop": 0x3F89_0000}
NEAR_ONE = ["--start", "0x3f7f0000", "--stop", "0x3f810000"]


def _verdict(method: str, a: str, b: str) -> tuple[str, int]:
    try:
        if method == "brute":
            record = brute_force(0.5, a, b, run=RangeRun(workers=1, **ACROSS_A_MIDPOINT))
        else:
            record = enumerate_exposing(0.5, a, b)
    except KernelFaultError as exc:
        return ("kernel-error", len(exc.reason) > 0)
    return ("done", record.count)


@pytest.mark.parametrize("method", ["brute", "enumerate"])
@pytest.mark.parametrize("user", ["clip_in_place_kernel", "sneaky_clip_kernel"])
def test_detect_kernel_writing_its_input_gets_one_verdict_in_both_orders(
    method: str, user: str
) -> None:
    spec = f"{M}:{user}"
    ab, ba = _verdict(method, spec, "reciprocal"), _verdict(method, "reciprocal", spec)
    assert ab == ba
    assert ab[0] == "kernel-error" or ab[1] > 0  # clipping x > 1 changes codes: never 0 exposing


def _detect_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    rc = main(["detect", "--quiet", "--workers", "1", "--json", "-", *argv])
    out = capsys.readouterr()
    payload = json.loads(out.out[out.out.index("{\n") :]) if "{\n" in out.out else {}
    return rc, payload, out.err


def test_detect_user_pair_defaults_to_brute_force_and_finds_the_one_wrong_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, payload, _ = _detect_json(
        ["--scales", "1.0", "--kernels", f"reciprocal,{M}:wrong_at_one", *NEAR_ONE], capsys
    )
    (entry,) = payload["entries"]
    assert rc == 0 and entry["method"] == "brute"
    assert entry["inputs"] == ["0x3f800000"] and entry["complete"] is True


def test_detect_enumeration_of_a_user_pair_says_it_is_not_complete(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--scales", "1.0", "--method", "enumerate", "--kernels", f"reciprocal,{M}:wrong_at_one"]
    rc, payload, err = _detect_json(argv, capsys)
    (entry,) = payload["entries"]
    assert rc == 0 and entry["complete"] is False and entry["count"] == 0
    assert "warning" in err and "not proven complete" in err


def test_detect_builtin_pair_enumeration_is_complete(capsys: pytest.CaptureFixture[str]) -> None:
    rc, payload, err = _detect_json(["--scales", "0.13,3.0"], capsys)
    assert rc == 0 and "warning" not in err
    assert [(e["method"], e["complete"], e["count"]) for e in payload["entries"]] == [
        ("enumerate", True, 118),
        ("enumerate", True, 30),
    ]
    assert enumerate_exposing(0.13, "divide", "reciprocal").complete
    assert not enumerate_exposing(0.13, "reciprocal", f"{M}:wrong_at_one").complete
    assert brute_force(
        0.13, "reciprocal", f"{M}:wrong_at_one", run=RangeRun(workers=1, **AROUND_ONE)
    ).complete


BROKEN = {
    "kernel_value_error": "ValueError: kernel refuses",
    "kernel_runtime_error": "RuntimeError: kernel exploded",
    "kernel_list": "list",
    "kernel_wrong_shape": "uint8",
}


@pytest.mark.parametrize("method", ["brute", "enumerate"])
@pytest.mark.parametrize("user", sorted(BROKEN))
@pytest.mark.parametrize("first", [True, False])
def test_detect_broken_kernel_is_a_kernel_error_exit_4_in_one_line(
    method: str, user: str, first: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{M}:{user}"
    pair = f"{spec},reciprocal" if first else f"reciprocal,{spec}"
    argv = ["detect", "--quiet", "--workers", "1", "--scales", "0.5", "--kernels", pair]
    rc = main([*argv, "--method", method, *(NEAR_ONE if method == "brute" else [])])
    out = capsys.readouterr()
    assert rc == 4
    assert_one_kernel_error_line(out.out + out.err, spec, BROKEN[user])


def test_detect_crashed_worker_is_a_kernel_error_exit_4() -> None:
    argv = ["detect", "--quiet", "--workers", "2", "--scales", "0.5", "--method", "brute"]
    pair = f"reciprocal,{M}:kernel_kills_worker"
    proc = subprocess.run(
        [sys.executable, "-m", "fp8lab", *argv, "--kernels", pair, *NEAR_ONE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "kernel_kills_worker" in proc.stderr and "kernel-error" in proc.stderr
