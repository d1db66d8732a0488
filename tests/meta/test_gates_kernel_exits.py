"""A foreign kernel cannot make ``fp8lab gates`` exit 0 (or 3).

Each kernel below ends its process or raises ``SystemExit``, during the call or
while its module is imported. ``fp8lab gates`` runs in a real process; it must
exit 1 with a FAIL row that names what the kernel did.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.meta.gates_subprocess import run_gates

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]

HOSTILE = """
import os
import signal

import numpy as np


def exit0(x, scale):
    raise SystemExit(0)


def exit3(x, scale):
    raise SystemExit(3)


def hard_exit0(x, scale):
    os._exit(0)


def segfault(x, scale):
    os.kill(os.getpid(), signal.SIGSEGV)


def matmul_exit0(a, b, s_in, s_w, out_dtype):
    raise SystemExit(0)


def chain_exit0(x, residual, weight, scale, eps):
    raise SystemExit(0)


def chain_hard_exit0(x, residual, weight, scale, eps):
    os._exit(0)
"""


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "hostile.py").write_text(HOSTILE)
    (tmp / "exits_on_import.py").write_text("raise SystemExit(0)\ndef f(x, scale):\n    pass\n")
    (tmp / "dies_on_import.py").write_text("import os\nos._exit(0)\n")
    return tmp


@pytest.mark.parametrize(
    ("spec", "gate", "reason"),
    [
        ("hostile:exit0", "G1", "SystemExit"),
        ("hostile:exit3", "G1", "SystemExit"),
        ("hostile:hard_exit0", "G1", "status 0"),
        ("hostile:segfault", "G1", "SIGSEGV"),
        ("hostile:matmul_exit0", "G3", "SystemExit"),
        ("exits_on_import:f", "G1", "SystemExit"),
        ("dies_on_import:f", "G1", "status 0"),
    ],
)
def test_a_kernel_that_exits_is_a_fail_row_with_the_reason(
    hostile_dir: Path, spec: str, gate: str, reason: str
) -> None:
    proc = run_gates(hostile_dir, "--gate", gate, "--kernel", spec, process=True)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    fail_rows = [line for line in proc.stdout.splitlines() if "FAIL" in line]
    assert any(spec in line and reason in line for line in fail_rows), proc.stdout
    assert "Traceback" not in proc.stderr


def test_every_gate_of_a_dying_kernel_fails_and_json_is_still_written(hostile_dir: Path) -> None:
    out = hostile_dir / "all.json"
    proc = run_gates(
        hostile_dir, "--gate", "G1,G3", "--kernel", "hostile:hard_exit0", "--json", str(out),
        process=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert out.read_text().count('"FAIL"') == 2


def test_a_missing_foreign_module_is_still_a_usage_error(hostile_dir: Path) -> None:
    proc = run_gates(hostile_dir, "--kernel", "no_such_module_here:f", process=True)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot import" in proc.stderr


@pytest.mark.parametrize(
    ("spec", "reason"),
    [("hostile:chain_exit0", "SystemExit"), ("hostile:chain_hard_exit0", "status 0")],
)
def test_a_chain_kernel_that_exits_is_a_gf_fail_row(
    hostile_dir: Path, spec: str, reason: str
) -> None:
    recipe = "vllm-cpp-standalone-rmsnorm-fp8"
    proc = run_gates(
        hostile_dir, "--gate", "GF", "--chain", "rmsnorm", "--recipe", recipe, "--kernel", spec,
        process=True,
    )  # fmt: skip
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert any(spec in line and reason in line for line in proc.stdout.splitlines())
    assert "Traceback" not in proc.stderr
