"""Kernels that fight the harness: none of what they do moves a verdict, and nothing survives.

Each kernel below is correct in its bytes or wrong in a known way, and also
leaks the rounding mode, hangs, stops itself, forks a helper that outlives it,
patches fp8lab's checker in its own process, or writes files where the old
child reported. ``fp8lab`` runs in a real process; each test asserts the
verdict, the exit status, the time bound and that no process of the kernel's
is left. A correct control beside them stays green.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.meta.gates_subprocess import run_fp8lab

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 3  # --kernel-timeout in these tests: a hang must end within it plus 5 s
STARTUP = 60  # seconds of start-up allowed on a loaded 2-core machine; a hang sleeps 3600 s

KERNELS = """
import ctypes, ctypes.util, os, subprocess, sys, time
from pathlib import Path

import numpy as np

from fp8lab.kernels import quant_static

_M = ctypes.CDLL(ctypes.util.find_library("m"))
_CALLS = [0]


def correct(x, scale):
    return quant_static(x, scale)


def leaks_rounding(x, scale):
    out = quant_static(x, scale)
    _M.fesetround(0xC00)  # toward zero, never restored
    return out


def _third_call(action):
    def kernel(x, scale):
        _CALLS[0] += 1
        if _CALLS[0] == 3:
            action()
        return quant_static(x, scale)
    return kernel


sleeps = _third_call(lambda: time.sleep(3600))
stops = _third_call(lambda: os.kill(os.getpid(), signal_stop()))


def signal_stop():
    import signal
    return signal.SIGSTOP


def _helper():
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    Path(os.environ["HOSTILE_PIDS"]).open("a").write(f"{child.pid}\\n")


def forks(x, scale):
    if _CALLS[0] == 0:
        _helper()
    _CALLS[0] += 1
    return quant_static(x, scale)


def forks_then_sleeps(x, scale):
    _helper()
    time.sleep(3600)


def divide_and_patch_the_checker(x, scale):
    import fp8lab.gates.compare as compare
    import fp8lab.gates.g1 as g1

    fake = lambda got, want, fmt, *a, **k: compare.compare_codes(want, want, fmt)
    g1.compare_codes = compare.compare_codes = fake
    y = np.asarray(x, np.float32) / np.float32(scale)  # the divide mutant: wrong bytes
    return quant_static(y, np.float32(1.0))


def writes_pass_everywhere(x, scale):
    for arg in sys.argv[1:]:
        if os.sep in arg:
            Path(arg).write_text('{"results": [{"status": "PASS"}]}')
    return quant_static(x, scale)


def encoder_exits(x, **keywords):
    os._exit(0)


def quant_exits(x, scale):
    os._exit(0)


def sum_exits(x):
    _CALLS[0] += 1
    if _CALLS[0] == 5:
        os._exit(0)
    return np.float32(np.sum(x, dtype=np.float32))
"""


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "hostile.py").write_text(KERNELS)
    return tmp


def _run(
    tmp: Path, *argv: str, pids: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    proc = run_fp8lab(tmp, *argv, env={"HOSTILE_PIDS": str(pids or tmp / "pids.txt")}, timeout=300)
    return proc, time.monotonic() - t0


def _survivors(pids: Path) -> list[int]:
    if not pids.exists():
        return []
    found = [int(p) for p in pids.read_text().split()]
    assert found, "the kernel started no helper: the test did not exercise it"
    alive = []
    for pid in found:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _g1(tmp: Path, kernel: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp / f"{kernel}-{len(extra)}-{time.monotonic_ns()}.json"
    proc, _ = _run(
        tmp, "gates", "--gate", "G1", "--kernel", f"hostile:{kernel}", *extra, "--json", str(out)
    )
    return proc, json.loads(out.read_text())[0] if out.exists() else {}


def test_the_correct_control_passes(kernel_dir: Path) -> None:
    proc, record = _g1(kernel_dir, "correct")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert record["status"] == "PASS" and record["fp_env_changed"] == ""


def test_a_leaked_rounding_mode_is_a_finding_not_a_mismatch(kernel_dir: Path) -> None:
    _, clean = _g1(kernel_dir, "correct")
    proc, leaky = _g1(kernel_dir, "leaks_rounding")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rounding toward zero" in leaky["fp_env_changed"]
    assert "fp_env_changed: the kernel left rounding toward zero" in proc.stdout
    same = ("status", "cases", "assertions", "assertions_failed", "words", "mismatches")
    assert {k: leaky[k] for k in same} == {k: clean[k] for k in same}
    strict, record = _g1(kernel_dir, "leaks_rounding", "--strict-env")
    assert strict.returncode == 1 and record["status"] == "FAIL"
    assert "--strict-env: the kernel left rounding toward zero" in record["reason"]


@pytest.mark.parametrize("kernel", ["sleeps", "stops"])
def test_a_kernel_that_hangs_is_killed_and_fails_in_time(kernel_dir: Path, kernel: str) -> None:
    pids = kernel_dir / f"{kernel}-pids.txt"
    proc, seconds = _run(
        kernel_dir,
        "gates",
        "--gate",
        "G1",
        "--kernel",
        f"hostile:{kernel}",
        "--kernel-timeout",
        str(TIMEOUT),
        pids=pids,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"kernel timed out after {TIMEOUT} s in call 3" in proc.stdout
    assert seconds < STARTUP + TIMEOUT + 5
    assert "Traceback" not in proc.stderr


def test_a_forked_helper_does_not_outlive_the_run(kernel_dir: Path) -> None:
    pids = kernel_dir / "fork-pids.txt"
    proc, _ = _run(kernel_dir, "gates", "--gate", "G1", "--kernel", "hostile:forks", pids=pids)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the bytes are right
    time.sleep(0.5)
    assert _survivors(pids) == []


def test_sigterm_ends_the_kernel_and_its_helper(kernel_dir: Path) -> None:
    pids = kernel_dir / "term-pids.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(kernel_dir)])}
    env["HOSTILE_PIDS"] = str(pids)
    cmd = [sys.executable, "-m", "fp8lab", "gates", "--gate", "G1"]
    proc = subprocess.Popen(
        [*cmd, "--kernel", "hostile:forks_then_sleeps"],
        cwd=kernel_dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + STARTUP + 30
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids.exists(), "the kernel never ran"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    time.sleep(0.5)
    assert _survivors(pids) == []


def test_a_wrong_kernel_that_patches_the_checker_still_fails(kernel_dir: Path) -> None:
    proc, record = _g1(kernel_dir, "divide_and_patch_the_checker")
    assert proc.returncode == 1 and record["status"] == "FAIL"
    assert record["mismatches"] > 0


def test_files_a_kernel_writes_are_no_result(kernel_dir: Path) -> None:
    proc, record = _g1(kernel_dir, "writes_pass_everywhere")
    assert proc.returncode == 0 and record["status"] == "PASS"  # its bytes are right
    assert record["words"] > 0 and record["cases"] == 14


def test_order_on_a_kernel_that_exits_mid_run_is_one_line_and_exit_1(kernel_dir: Path) -> None:
    proc, _ = _run(kernel_dir, "order", "--kernel", "hostile:sum_exits", "--as", "sum", "--k", "8")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "exited with status 0" in lines[0]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_kernel_that_exits_ends_exhaustive_and_detect_the_same_on_any_worker_count(
    kernel_dir: Path, workers: str
) -> None:
    exhaustive, _ = _run(
        kernel_dir,
        "exhaustive",
        "hostile:encoder_exits",
        "scan",
        "--policy",
        "sat",
        "--stop",
        "0x1000",
        "--workers",
        workers,
        "--quiet",
    )
    detect, _ = _run(
        kernel_dir,
        "detect",
        "--kernels",
        "reciprocal,hostile:quant_exits",
        "--scales",
        "0.5",
        "--method",
        "brute",
        "--stop",
        "0x10000",
        "--workers",
        workers,
        "--quiet",
    )
    for proc in (exhaustive, detect):
        assert proc.returncode == 4, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "kernel-error" in lines[0], proc.stderr
        assert "kernel process exited with status 0" in lines[0]
