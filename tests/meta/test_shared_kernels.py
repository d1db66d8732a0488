"""Kernels in shared libraries, through the C ABI.

The examples in ``examples/kernels/`` are built by g++ here, correct and with
each planted defect switched on by ``-D``. G1 and G3 pass the correct ones and
fail every planted one; a segfault, an abort or a non-zero return inside the
library is a FAIL naming it, never a crashed command line; a missing file or
symbol is one line with exit 2. And ``--kernel mykern:quant`` finds
``./mykern.py`` without ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fp8lab.gates import GateStatus, run_g1, run_g3
from fp8lab.kernels import load_shared
from fp8lab.kernels.sources.shared_abi import ABI_HEADER, SharedKernelError
from tests.in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "kernels"
QUANT_DEFECTS = ("DIVIDE", "TIES_AWAY", "NAN_448", "SKIP_ZERO")
GEMM_DEFECTS = ("TWO_SCALAR", "NO_ALPHA", "REVERSE_K", "SKIP_LAST")
CRASHES = ("STATUS", "SEGFAULT", "ABORT")

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the examples)"),
]


def build(source: str, out: Path, defect: str = "") -> Path:
    flags = [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    cmd = ["g++", "-O2", "-shared", "-fPIC", "-Wall", "-Werror", f"-I{ABI_HEADER.parent}"]
    subprocess.run([*cmd, *flags, str(EXAMPLES / source), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("libs")
    out = {"quant": build("vllm_cpp_quant.cpp", tmp / "libq.so")}
    out["gemm"] = build("vllm_cpp_gemm.cpp", tmp / "libg.so")
    for d in QUANT_DEFECTS + CRASHES:
        out[d] = build("vllm_cpp_quant.cpp", tmp / f"libq_{d}.so", d)
    for d in GEMM_DEFECTS:
        out[d] = build("vllm_cpp_gemm.cpp", tmp / f"libg_{d}.so", d)
    return out


def test_g1_passes_the_correct_library(libs: dict[str, Path]) -> None:
    result = run_g1(load_shared(libs["quant"], "fp8lab_quant"))
    assert result.status is GateStatus.PASS, result.reason
    assert result.cases == 14 and result.assertions == 84 and result.words > 0


@pytest.mark.parametrize("defect", QUANT_DEFECTS)
def test_g1_fails_every_planted_quant_defect(libs: dict[str, Path], defect: str) -> None:
    result = run_g1(load_shared(libs[defect], "fp8lab_quant"))
    assert result.status is GateStatus.FAIL and result.assertions_failed > 0


@pytest.mark.parametrize(
    ("lib", "symbol", "kind", "gate"),
    [
        ("SKIP_ZERO", "fp8lab_quant", "quant", run_g1),
        ("SKIP_LAST", "fp8lab_matmul", "matmul", run_g3),
    ],
)
def test_an_output_byte_the_library_never_wrote_fails(
    libs: dict[str, Path], lib: str, symbol: str, kind: str, gate: object
) -> None:
    """An output byte left unstored keeps its fill: the quant defect stores every code but 0x00,
    so a buffer that started zeroed would pass it."""
    result = gate(load_shared(libs[lib], symbol, kind))  # type: ignore[operator]
    assert result.status is GateStatus.FAIL
    assert "unwritten (" in result.reason and "or is not deterministic" in result.reason


def test_g3_passes_the_correct_gemm(libs: dict[str, Path]) -> None:
    result = run_g3(load_shared(libs["gemm"], "fp8lab_matmul", "matmul"))
    assert result.status is GateStatus.PASS, result.reason
    assert result.mismatches == 0 and result.cases == 9


@pytest.mark.parametrize("defect", GEMM_DEFECTS)
def test_g3_fails_every_planted_gemm_defect(libs: dict[str, Path], defect: str) -> None:
    result = run_g3(load_shared(libs[defect], "fp8lab_matmul", "matmul"))
    assert result.status is GateStatus.FAIL and result.assertions_failed > 0


def test_a_non_zero_return_is_a_kernel_error(libs: dict[str, Path]) -> None:
    kernel = load_shared(libs["STATUS"], "fp8lab_quant")
    with pytest.raises(SharedKernelError, match="fp8lab_quant returned 7"):
        kernel.quantize(np.ones(4, np.float32), 1.0)  # type: ignore[union-attr]
    result = run_g1(kernel)
    assert result.status is GateStatus.FAIL and "returned 7" in result.reason


def test_a_missing_symbol_or_file_is_one_clear_error(libs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="has no symbol 'no_such_symbol'"):
        load_shared(libs["quant"], "no_such_symbol")
    with pytest.raises(ValueError, match="no such file"):
        load_shared(tmp_path / "absent.so", "fp8lab_quant")


def _fp8lab(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # -P: the current directory is not put on sys.path by the interpreter, as
    # for the installed `fp8lab` script; only fp8lab's own lookup can find it.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-P", "-m", "fp8lab", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def _gates(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``fp8lab gates`` in this process (the library still runs in a process of its own)."""
    return run_main(["gates", *argv], cwd=cwd)


def test_the_cli_gates_a_library(libs: dict[str, Path], tmp_path: Path) -> None:
    proc = _gates(tmp_path, "--gate", "G1", "--kernel", f"{libs['quant']}:fp8lab_quant")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _gates(tmp_path, "--gate", "G3", "--kernel", f"{libs['gemm']}:fp8lab_matmul")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _gates(tmp_path, "--gate", "G1", "--kernel", f"{libs['DIVIDE']}:fp8lab_quant")
    assert proc.returncode == 1 and "FAIL" in proc.stdout


@pytest.mark.parametrize(("defect", "said"), [("SEGFAULT", "SIGSEGV"), ("ABORT", "SIGABRT")])
def test_a_library_that_crashes_is_a_fail_naming_the_signal(
    libs: dict[str, Path], tmp_path: Path, defect: str, said: str
) -> None:
    proc = _gates(tmp_path, "--gate", "G1", "--kernel", f"{libs[defect]}:fp8lab_quant")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert any("FAIL" in line and said in line for line in proc.stdout.splitlines())
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("spec", ["{lib}:no_such_symbol", "{tmp}/absent.so:fp8lab_quant"])
def test_a_missing_library_or_symbol_is_a_usage_error(
    libs: dict[str, Path], tmp_path: Path, spec: str
) -> None:
    proc = _gates(tmp_path, "--kernel", spec.format(lib=libs["quant"], tmp=tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_module_in_the_current_directory_is_found(tmp_path: Path) -> None:
    (tmp_path / "mykern.py").write_text(
        "from fp8lab.kernels import quant_static\n"
        "def quant(x, scale):\n    return quant_static(x, scale)\n"
    )
    proc = _fp8lab(tmp_path, "gates", "--gate", "G1", "--kernel", "mykern:quant")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # detect imports the kernel in this process (gates does so in a child)
    detect = ["detect", "--scales", "0.13", "--kernels", "reciprocal,mykern:quant"]
    proc = _fp8lab(tmp_path, *detect, "--stop", "0x10000", "--workers", "1", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("lib", "sequential"), [("gemm", True), ("REVERSE_K", False)])
def test_order_infers_a_library_gemms_tree(
    libs: dict[str, Path], tmp_path: Path, lib: str, sequential: bool
) -> None:
    proc = run_main(["order", "--kernel", f"{libs[lib]}:fp8lab_matmul", "--k", "64"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("family: sequential" in proc.stdout) is sequential, proc.stdout
