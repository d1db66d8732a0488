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
import tempfile
import time
import uuid
from pathlib import Path

import psutil
import pytest

from fp8lab.kernels.sources.box import BOX_ENV, isolation_level
from tests.meta.gates_subprocess import run_fp8lab

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 3  # --kernel-timeout in these tests: a hang must end within it plus 5 s
STARTUP = 60  # seconds of start-up allowed on a loaded 2-core machine; a hang sleeps 3600 s
MARKER = f"fp8lab-hostile-{uuid.uuid4().hex}"  # in every helper's command line
OUTSIDE = Path(tempfile.gettempdir()) / f"{MARKER}-outside.txt"  # no boxed kernel may write it

KERNELS = """
import ctypes, ctypes.util, json, os, signal, subprocess, sys, time
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


SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)", os.environ["HOSTILE_MARKER"]]


def _helper():
    subprocess.Popen(SLEEPER, start_new_session=True)
    print("hostile: helper started", file=sys.stderr, flush=True)


def _orphans():
    # three helpers a sweep by descent or by an environment token would miss
    subprocess.Popen(SLEEPER, env={}, start_new_session=True)  # no environment at all
    if os.fork() == 0:  # a daemon: setsid, every fd closed, double fork
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 1 << 16)
            os.execv(SLEEPER[0], SLEEPER)
        os._exit(0)
    os.wait()
    os.environ["FP8LAB_PROCESS_TREE"] = "not-the-runs-token"  # its own token overwritten
    subprocess.Popen(SLEEPER, start_new_session=True)
    print("hostile: orphans started", file=sys.stderr, flush=True)


def orphans(x, scale):
    if _CALLS[0] == 0:
        _orphans()
    _CALLS[0] += 1
    return quant_static(x, scale)


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


def _parent():
    return json.loads(sys.argv[1])["parent"]  # fp8lab's pid, from the child's command line


def _tried(what, attack):
    try:
        attack()
    except Exception as exc:
        print(f"hostile: {what}: {type(exc).__name__}", file=sys.stderr, flush=True)
    else:
        print(f"hostile: {what}: done", file=sys.stderr, flush=True)


def _plant():
    words = Path(f"/proc/{_parent()}/cmdline").read_bytes().split(b"\\0")
    for flag in (b"--json", b"--junit-xml"):
        Path(words[words.index(flag) + 1].decode()).write_text('{"status": "PASS"}')


def divide_and_plant_records(x, scale):
    if _CALLS[0] == 0:
        _tried("plant", _plant)
    _CALLS[0] += 1
    y = np.asarray(x, np.float32) / np.float32(scale)  # the divide mutant: wrong bytes
    return quant_static(y, np.float32(1.0))


def _write_parent_memory():
    pid = _parent()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        span, perms = line.split()[:2]
        if perms.startswith("rw"):
            with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
                mem.seek(int(span.split("-")[0], 16))
                mem.write(b"\\0" * 4096)
            return


def _limit_parent():
    import resource

    resource.prlimit(_parent(), resource.RLIMIT_FSIZE, (0, 0))


def attacks_its_parent(x, scale):
    if _CALLS[0] == 0:
        _tried("mem", _write_parent_memory)
        _tried("fsize", _limit_parent)
        _tried("stop", lambda: os.kill(_parent(), signal.SIGSTOP))
        _tried("kill", lambda: os.kill(_parent(), signal.SIGKILL))
        _tried("write", lambda: Path(os.environ["HOSTILE_OUTSIDE"]).write_text("planted"))
        _tried("tmp", lambda: Path(os.environ["TMPDIR"], "scratch").write_text("mine"))
    _CALLS[0] += 1
    return quant_static(x, scale)


def _lies():
    import fp8lab.kernels.sources.child as child

    child.env_change = lambda before, after: ""  # its own environment check says nothing


def lies_about_rounding(x, scale):
    _lies()
    out = quant_static(x, scale)
    _M.fesetround(0xC00)  # toward zero, never restored
    return out


def _raw_answer(head):
    out = int(sys.argv[3])  # the answer pipe
    os.write(out, len(head).to_bytes(8, "little") + head)
    time.sleep(3600)


def deep_answer(x, scale):
    _raw_answer(b'{"result": ' + b"[" * 100_000 + b"]" * 100_000 + b', "arrays": []}')


def inf_shape(x, scale):
    _raw_answer(b'{"result": {"array": 0}, "arrays": [["|u1", [Infinity]]]}')


def inf_index(x, scale):
    _raw_answer(b'{"result": {"array": 1e400}, "arrays": []}')


def huge_answer(x, scale):
    return np.zeros(300 << 20, np.uint8)


def generator(x, scale):
    return (c for c in quant_static(x, scale))


class Named:
    name = "innocent\\nG1    fake-row  PASS\\udcff"
    nan_policy = "canonical"

    def quantize(self, x, scale):
        return quant_static(x, scale)


named = Named()


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


BOXED = isolation_level() == "namespace"
needs_box = pytest.mark.skipif(not BOXED, reason="no user namespaces here: no box to test")


@pytest.fixture(params=["box", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    """Each orphan test runs in the box and, with ``FP8LAB_BOX=none``, as a plain process."""
    if request.param == "box" and not BOXED:
        pytest.skip("no user namespaces here: no box to test")
    return str(request.param)


def _env(isolation: str = "box") -> dict[str, str]:
    env = {"HOSTILE_MARKER": MARKER, "HOSTILE_OUTSIDE": str(OUTSIDE)}
    return {**env, BOX_ENV: "none"} if isolation == "process" else env


def _run(
    tmp: Path, *argv: str, isolation: str = "box"
) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    proc = run_fp8lab(tmp, *argv, env=_env(isolation), timeout=300, process=True)
    return proc, time.monotonic() - t0


def _survivors(*, helpers_only: bool = False) -> list[str]:
    """Every process on the machine that a run started, by the marker in it.

    The whole process table, not this test's descendants: a helper reparented to
    init or to a subreaper, or one that dropped its environment, is still found
    (by its command line); fp8lab's own processes carry the marker in their
    environment.
    """
    alive = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            mine = MARKER in " ".join(proc.info["cmdline"] or ())
            if not mine and not helpers_only:
                mine = proc.environ().get("HOSTILE_MARKER") == MARKER
        except (psutil.Error, OSError):
            continue
        if mine and proc.info["status"] != psutil.STATUS_ZOMBIE and proc.pid != os.getpid():
            alive.append(f"{proc.pid} {proc.info['cmdline']}")
    return alive


def _g1(
    tmp: Path, kernel: str, *extra: str, isolation: str = "box"
) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp / f"{kernel}-{len(extra)}-{time.monotonic_ns()}.json"
    proc, _ = _run(
        tmp,
        *("gates", "--gate", "G1", "--kernel", f"hostile:{kernel}", *extra, "--json", str(out)),
        isolation=isolation,
    )
    return proc, json.loads(out.read_text())[0] if out.exists() else {}


def test_the_correct_control_passes(kernel_dir: Path) -> None:
    proc, record = _g1(kernel_dir, "correct")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert record["status"] == "PASS" and record["fp_env_changed"] == ""
    assert record["isolation"] == ("namespace" if BOXED else "process")
    assert record["fp_env_read"] == "ptrace"


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


def test_a_kernel_that_silences_its_own_environment_check_still_fails_strict_env(
    kernel_dir: Path,
) -> None:
    proc, record = _g1(kernel_dir, "lies_about_rounding", "--strict-env")
    assert proc.returncode == 1 and record["status"] == "FAIL", proc.stdout + proc.stderr
    assert "--strict-env: the kernel left rounding toward zero" in record["reason"]
    assert record["fp_env_read"] == "ptrace"


@pytest.mark.parametrize("kernel", ["sleeps", "stops"])
def test_a_kernel_that_hangs_is_killed_and_fails_in_time(kernel_dir: Path, kernel: str) -> None:
    proc, seconds = _run(
        kernel_dir,
        *("gates", "--gate", "G1", "--kernel", f"hostile:{kernel}"),
        *("--kernel-timeout", str(TIMEOUT)),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"kernel timed out after {TIMEOUT} s in call 3" in proc.stdout
    assert seconds < STARTUP + TIMEOUT + 5
    assert "Traceback" not in proc.stderr
    assert _survivors() == []


@pytest.mark.slow(reason="two fp8lab runs, each starting a kernel process and its helpers")
def test_no_helper_outlives_the_run_whatever_it_sheds(kernel_dir: Path, isolation: str) -> None:
    for kernel in ("forks", "orphans"):
        proc, record = _g1(kernel_dir, kernel, isolation=isolation)
        assert proc.returncode == 0, proc.stdout + proc.stderr  # the bytes are right
        assert "started" in proc.stderr, "the kernel started no helper: nothing was tested"
        assert record["isolation"] == ("namespace" if isolation == "box" else "process")
        assert _survivors() == []


def test_sigterm_ends_the_kernel_and_its_helper(kernel_dir: Path) -> None:
    env = {**os.environ, **_env(), "PYTHONPATH": os.pathsep.join([str(ROOT), str(kernel_dir)])}
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
    while not _survivors(helpers_only=True) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _survivors(helpers_only=True), "the kernel never ran"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _survivors() == []


def test_a_wrong_kernel_that_patches_the_checker_still_fails(kernel_dir: Path) -> None:
    proc, record = _g1(kernel_dir, "divide_and_patch_the_checker")
    assert proc.returncode == 1 and record["status"] == "FAIL"
    assert record["mismatches"] > 0


@pytest.mark.parametrize("isolation", ["box", "process"])
def test_records_a_kernel_plants_are_replaced_by_the_real_ones(
    kernel_dir: Path, isolation: str
) -> None:
    if isolation == "box" and not BOXED:
        pytest.skip("no user namespaces here: no box to test")
    out, junit = kernel_dir / f"plant-{isolation}.json", kernel_dir / f"plant-{isolation}.xml"
    argv = ("gates", "--gate", "G1", "--kernel", "hostile:divide_and_plant_records")
    proc, _ = _run(
        kernel_dir, *argv, "--json", str(out), "--junit-xml", str(junit), isolation=isolation
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert json.loads(out.read_text())[0]["status"] == "FAIL"
    assert "<failure" in junit.read_text()
    if isolation == "box":  # fp8lab's command line and files are out of its reach
        assert "hostile: plant: FileNotFoundError" in proc.stderr
    else:
        assert "hostile: plant: done" in proc.stderr
        assert proc.stderr.count("replaced by this run's record") == 2


@needs_box
def test_in_the_box_every_reach_for_fp8lab_is_an_error_in_the_kernels_process(
    kernel_dir: Path,
) -> None:
    OUTSIDE.unlink(missing_ok=True)
    proc, record = _g1(kernel_dir, "attacks_its_parent")
    assert proc.returncode == 0 and record["status"] == "PASS", proc.stdout + proc.stderr
    for attack in ("mem", "fsize", "stop", "kill"):
        assert f"hostile: {attack}: FileNotFoundError" in proc.stderr or (
            f"hostile: {attack}: ProcessLookupError" in proc.stderr
        ), proc.stderr
    assert "hostile: write: OSError" in proc.stderr and not OUTSIDE.exists()
    assert "hostile: tmp: done" in proc.stderr
    assert _survivors() == []


@pytest.mark.parametrize(
    ("kernel", "said"),
    [
        ("deep_answer", "kernel sent a malformed answer in call 1"),
        ("inf_shape", "kernel sent a malformed answer in call 1"),
        ("inf_index", "kernel sent a malformed answer in call 1"),
        ("huge_answer", "kernel's answer is over the 256 MiB cap"),
        ("generator", "kernel returned generator, not a numpy array"),
    ],
)
def test_a_crafted_answer_is_a_fail_in_one_line(kernel_dir: Path, kernel: str, said: str) -> None:
    proc, record = _g1(kernel_dir, kernel, "--kernel-timeout", "30")
    assert proc.returncode == 1 and record["status"] == "FAIL", proc.stdout + proc.stderr
    assert said in record["reason"] and "Traceback" not in proc.stderr


def test_a_kernels_name_is_one_escaped_line(kernel_dir: Path) -> None:
    proc, _ = _g1(kernel_dir, "named")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not any(line.startswith("G1    fake-row") for line in proc.stdout.splitlines())
    assert "innocent\\x0aG1" in proc.stdout


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
