"""GQ checks shared-library kernels through the C ABI.

``examples/kernels/scheme_quant.cpp`` is built by g++ once per module, correct
and with each planted defect switched on by ``-D``. GQ passes the correct
symbols (through the API and through ``fp8lab gates``) and fails every planted
one; a non-zero return, a segfault and outputs left unwritten are FAIL rows
naming scheme and rule; a missing symbol or file is one line with exit 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GateStatus, run_gq
from fp8lab.kernels import load_shared
from fp8lab.kernels.sources.shared_abi import ABI_HEADER, SharedKernelError
from tests.meta.gates_subprocess import run_gates

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "kernels" / "scheme_quant.cpp"
# symbol -> (scheme, rule) it computes
SYMBOLS = {
    "vllm_per_token_quant": ("per-token", "vllm-per-token"),
    "vllm_per_group_quant": ("per-group", "vllm-per-group"),
    "mxfp8_rceil_quant": ("mxfp8", "rceil"),
}
# planted defect -> the symbols it changes
DEFECTS = {
    "RECIPROCAL": ("vllm_per_token_quant", "vllm_per_group_quant"),
    "BLOCK_31": ("mxfp8_rceil_quant",),
    "E8M0_LOW": ("mxfp8_rceil_quant",),
    "NO_FLOOR": ("vllm_per_token_quant",),
}
# C stubs: one that writes nothing, one that echoes its arguments (nvfp4 signature)
STUBS = r"""
#include "fp8lab_kernel.h"
extern "C" int32_t lazy(const void *, int32_t, int64_t, int64_t, uint8_t *, void *) {
  return 0;
}
extern "C" int32_t echo_nvfp4(const void *, int32_t x_dtype, int64_t m, int64_t k, float g,
                              uint8_t *codes, uint8_t *scales) {
  for (int64_t i = 0; i < m * k; ++i) codes[i] = static_cast<uint8_t>(g) & 0x0F;
  for (int64_t i = 0; i < m * (k / 16); ++i) scales[i] = static_cast<uint8_t>(m + k + x_dtype);
  return 0;
}
"""
PER_TOKEN = ["--gate", "GQ", "--scheme", "per-token", "--rule", "vllm-per-token"]

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the examples)"),
]


def _build(source: Path, out: Path, defect: str = "") -> Path:
    flags = [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    cmd = ["g++", "-O2", "-shared", "-fPIC", "-Wall", "-Werror", f"-I{ABI_HEADER.parent}"]
    subprocess.run([*cmd, *flags, str(source), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("gqlibs")
    out = {"": _build(SOURCE, tmp / "libscheme.so")}
    for d in (*DEFECTS, "STATUS", "SEGFAULT"):
        out[d] = _build(SOURCE, tmp / f"libscheme_{d}.so", d)
    (tmp / "stubs.cpp").write_text(STUBS)
    out["stubs"] = _build(tmp / "stubs.cpp", tmp / "libstubs.so")
    return out


def _gq(lib: Path, symbol: str) -> GateStatus:
    scheme, rule = SYMBOLS[symbol]
    result = run_gq(load_shared(lib, symbol, "scheme", scheme=scheme), scheme=scheme, rule=rule)
    assert result.cases == 42 and result.words > 40_000  # it examined the whole population
    return result.status


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_gq_passes_each_correct_symbol(libs: dict[str, Path], symbol: str) -> None:
    assert _gq(libs[""], symbol) is GateStatus.PASS


@pytest.mark.parametrize(
    ("defect", "symbol"), [(d, s) for d, symbols in DEFECTS.items() for s in symbols]
)
def test_gq_fails_every_planted_defect(libs: dict[str, Path], defect: str, symbol: str) -> None:
    assert _gq(libs[defect], symbol) is GateStatus.FAIL


def test_the_cli_passes_the_library_in_a_real_process(
    libs: dict[str, Path], tmp_path: Path
) -> None:
    spec = f"{libs['']}:vllm_per_token_quant"
    proc = run_gates(tmp_path, *PER_TOKEN, "--kernel", spec, "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    (row,) = json.loads((tmp_path / "r.json").read_text())
    assert (row["kernel"], row["status"], row["scheme"], row["rule"]) == (
        spec,
        "PASS",
        "per-token",
        "vllm-per-token",
    )
    assert row["cases"] == 42


@pytest.mark.parametrize(
    ("defect", "said"),
    [("RECIPROCAL", "mismatches in"), ("STATUS", "returned 7"), ("SEGFAULT", "SIGSEGV")],
)
def test_a_defect_an_error_or_a_crash_is_a_fail_row_naming_scheme_and_rule(
    libs: dict[str, Path], capsys: pytest.CaptureFixture[str], defect: str, said: str
) -> None:
    """The command in this process; the library still runs in the gate's child."""
    argv = ["gates", "--gate", "GQ", "--scheme", "mxfp8", "--rule", "rceil", "--json", "-"]
    symbol = "mxfp8_rceil_quant"
    if defect == "RECIPROCAL":
        argv[3:7], symbol = PER_TOKEN[2:], "vllm_per_token_quant"
    assert main([*argv, "--kernel", f"{libs[defect]}:{symbol}"]) == 1
    out, err = capsys.readouterr()
    (row,) = json.loads(out[out.index("[") :])
    assert row["status"] == "FAIL" and said in row["reason"] and "Traceback" not in err
    assert (row["scheme"], row["rule"]) == (argv[4], argv[6])


def test_outputs_left_unwritten_are_a_kernel_error(libs: dict[str, Path]) -> None:
    kernel = load_shared(libs["stubs"], "lazy", "scheme", scheme="per-token")
    with pytest.raises(SharedKernelError, match="left codes unwritten"):
        kernel(np.ones((2, 4), np.float32))  # type: ignore[operator]
    result = run_gq(kernel, scheme="per-token", rule="vllm-per-token")
    assert result.status is GateStatus.FAIL and "unwritten" in result.reason


def test_the_nvfp4_signature_carries_every_argument(libs: dict[str, Path]) -> None:
    kernel = load_shared(libs["stubs"], "echo_nvfp4", "scheme", scheme="nvfp4")
    x = np.zeros((3, 32), np.float32)
    codes, scales = kernel(x, np.array([5.0], np.float32))  # type: ignore[operator]
    assert codes.shape == (3, 32) and set(codes.ravel()) == {5}
    assert scales.dtype == np.uint8 and scales.shape == (3, 2) and set(scales.ravel()) == {35}
    with pytest.raises(ValueError, match="takes 1 argument"):
        kernel(x)  # type: ignore[operator]


@pytest.mark.parametrize(
    "spec", ["{lib}:no_such_symbol", "{tmp}/absent.so:vllm_per_token_quant", "{lib}:"]
)
def test_a_missing_library_or_symbol_is_one_line_exit_2(
    libs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    kernel = spec.format(lib=libs[""], tmp=tmp_path)
    assert main(["gates", *PER_TOKEN, "--kernel", kernel]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
