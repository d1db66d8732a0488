"""Hostile encoders and kernels in ``exhaustive`` and ``detect``: they run alone, under a watchdog.

The same faults as the gates' hostile suite (:mod:`tests.integration.test_hostile_kernels`),
met by the commands that resolve a ``MODULE:FUNC`` in their worker processes:
a hang is killed within the timeout, a leaked rounding mode is a finding that
changes no count, a wrong encoder that patches fp8lab in its own process
still fails, and a helper it forks does not outlive the run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.integration.test_hostile_kernels import STARTUP, TIMEOUT, _run, _survivors

pytestmark = pytest.mark.process

ENCODERS = """
import ctypes, ctypes.util, os, subprocess, sys, time
from pathlib import Path

from fp8lab.codecs import encode
from fp8lab.kernels import quant_static

_M = ctypes.CDLL(ctypes.util.find_library("m"))


def correct(x):
    return encode(x, "e4m3fn")


def leaks_rounding(x):
    out = encode(x, "e4m3fn")
    _M.fesetround(0xC00)  # toward zero, never restored
    return out


def lies_about_rounding(x):
    import fp8lab.kernels.sources.child as child

    child.env_change = lambda before, after: ""  # its own environment check says nothing
    out = encode(x, "e4m3fn")
    _M.fesetround(0xC00)
    return out


def sleeps(x):
    time.sleep(3600)


def quant_sleeps(x, scale):
    time.sleep(3600)


def halves_and_patches(x):
    import fp8lab.sweeps.exhaustive_chunks as chunks

    chunks.compare_chunk = lambda *args: None  # nothing of the harness runs here
    return encode(x * 0.5, "e4m3fn")  # wrong bytes


def forks(x):
    marker = os.environ["HOSTILE_MARKER"]
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=True
    )
    print("hostile: helper started", file=sys.stderr, flush=True)
    return encode(x, "e4m3fn")
"""

SPAN = ("--start", "0x3f000000", "--stop", "0x3f010000")


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile_sweeps")
    (tmp / "hostile_enc.py").write_text(ENCODERS)
    return tmp


def _exhaustive(tmp: Path, encoder: str, *extra: str) -> tuple:
    out = tmp / f"{encoder}-{time.monotonic_ns()}.json"
    argv = ["exhaustive", f"hostile_enc:{encoder}", "scan", "--policy", "sat", *SPAN]
    proc, seconds = _run(tmp, *argv, "--quiet", *extra, "--json", str(out))
    return proc, (json.loads(out.read_text()) if out.exists() else {}), seconds


def test_a_leaked_rounding_mode_changes_no_count_in_exhaustive(encoder_dir: Path) -> None:
    proc, clean, _ = _exhaustive(encoder_dir, "correct")
    assert proc.returncode == 0 and clean["fp_env_changed"] == "", proc.stdout + proc.stderr
    proc, leaky, _ = _exhaustive(encoder_dir, "leaks_rounding")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rounding toward zero" in leaky["fp_env_changed"]
    same = ("status", "examined", "mismatches", "mismatches_by_class", "covered")
    assert {k: leaky[k] for k in same} == {k: clean[k] for k in same}
    strict, record, _ = _exhaustive(encoder_dir, "leaks_rounding", "--strict-env")
    assert strict.returncode == 1 and record["status"] == "FAIL"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_encoder_that_hangs_is_killed_in_time(encoder_dir: Path, workers: str) -> None:
    extra = ("--workers", workers, "--kernel-timeout", str(TIMEOUT))
    proc, record, seconds = _exhaustive(encoder_dir, "sleeps", *extra)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    # On a loaded machine the encoder's module can take longer than the timeout to import:
    # the same watchdog then ends it while loading, which is as right.
    killed = (
        f"kernel timed out after {TIMEOUT} s {where}" for where in ("in call 1", "while loading")
    )
    assert len(lines) == 1 and any(k in lines[0] for k in killed), lines
    assert record["status"] == "kernel-error" and record["examined"] == 0
    assert seconds < STARTUP + TIMEOUT + 5


def test_a_detect_kernel_that_hangs_is_killed_in_time(encoder_dir: Path) -> None:
    argv = ["detect", "--kernels", "reciprocal,hostile_enc:quant_sleeps", "--scales", "0.5"]
    argv += ["--method", "brute", "--stop", "0x10000", "--quiet"]
    proc, seconds = _run(encoder_dir, *argv, "--kernel-timeout", str(TIMEOUT))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"kernel timed out after {TIMEOUT} s" in proc.stderr
    assert seconds < STARTUP + TIMEOUT + 5 and "Traceback" not in proc.stderr


def test_a_wrong_encoder_that_patches_fp8lab_still_fails(encoder_dir: Path) -> None:
    proc, record, _ = _exhaustive(encoder_dir, "halves_and_patches")
    assert proc.returncode == 1 and record["status"] == "FAIL", proc.stdout + proc.stderr
    assert record["mismatches"] > 0


def test_a_helper_an_encoder_forks_does_not_outlive_exhaustive(encoder_dir: Path) -> None:
    proc, record, _ = _exhaustive(encoder_dir, "forks", "--workers", "2")
    assert proc.returncode == 0 and record["status"] == "PASS", proc.stdout + proc.stderr
    assert "helper started" in proc.stderr
    assert _survivors() == []


def test_an_encoder_that_silences_its_own_environment_check_still_fails_strict_env(
    encoder_dir: Path,
) -> None:
    proc, record, _ = _exhaustive(encoder_dir, "lies_about_rounding", "--strict-env")
    assert proc.returncode == 1 and record["status"] == "FAIL", proc.stdout + proc.stderr
    assert "rounding toward zero" in record["fp_env_changed"]
    assert record["fp_env_read"] == "ptrace" and record["isolation"] in ("namespace", "process")
