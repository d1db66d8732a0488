"""GQ checks a real NVFP4 library through ``fp8lab_nvfp4_quant``.

``examples/kernels/nvfp4_quant.cpp`` (a C++ port of TransformerEngine's rowwise
NVFP4 cast, one symbol per rule of :mod:`fp8lab.specs.nvfp4_rules`) is built
by g++ once per module, correct and with each planted defect switched on by
``-D``. GQ passes each symbol under its rule (``fp8lab gates`` in a real process
for te-nvfp4-divide) and fails every planted defect.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fp8lab.gates import GateStatus, run_gq
from fp8lab.kernels import load_shared
from fp8lab.kernels.sources.shared_abi import ABI_HEADER
from tests.meta.gates_subprocess import run_gates

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "kernels" / "nvfp4_quant.cpp"
# symbol -> the nvfp4 rule it computes
SYMBOLS = {
    "te_nvfp4_divide_quant": "te-nvfp4-divide",
    "te_nvfp4_reciprocal_quant": "te-nvfp4-reciprocal",
    "te_nvfp4_fused_quant": "te-nvfp4-fused",
}
# planted defect -> a symbol it changes (together they cover the three)
DEFECTS = {
    "TRUNC_SCALE": "te_nvfp4_reciprocal_quant",  # e4m3 block byte truncated, not RNE
    "RECIPROCAL_BLOCK": "te_nvfp4_divide_quant",  # block_amax * (1/6) * S_enc
    "E2M1_AWAY": "te_nvfp4_fused_quant",  # e2m1 ties away from zero
    "NO_INV_CLAMP": "te_nvfp4_divide_quant",  # 1 / (S_dec_b * S_dec) without fminf
}

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the examples)"),
]


def build_nvfp4(out: Path, defect: str = "") -> Path:
    """g++ nvfp4_quant.cpp into a shared library (``-DFP8LAB_DEFECT_<defect>``)."""
    flags = [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    cmd = ["g++", "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"]
    cmd.append(f"-I{ABI_HEADER.parent}")
    subprocess.run([*cmd, *flags, str(SOURCE), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("nvfp4libs")
    return {d: build_nvfp4(tmp / f"libnvfp4{d}.so", d) for d in ("", *DEFECTS)}


def _gq(lib: Path, symbol: str, dtypes: tuple[str, ...] = ("float32", "bfloat16")) -> GateStatus:
    kernel = load_shared(lib, symbol, "scheme", scheme="nvfp4")
    result = run_gq(kernel, scheme="nvfp4", rule=SYMBOLS[symbol], input_dtypes=dtypes)
    # it examined the whole population, for each input dtype asked
    assert result.cases == 198 * len(dtypes) and result.words == 53_856 * len(dtypes)
    return result.status


@pytest.mark.parametrize("symbol", ["te_nvfp4_reciprocal_quant", "te_nvfp4_fused_quant"])
def test_gq_passes_the_symbol_of_each_rule(libs: dict[str, Path], symbol: str) -> None:
    assert _gq(libs[""], symbol) is GateStatus.PASS


def test_fp8lab_gates_passes_the_divide_symbol_in_a_real_process(
    libs: dict[str, Path], tmp_path: Path
) -> None:
    spec = f"{libs['']}:te_nvfp4_divide_quant"
    argv = ["--gate", "GQ", "--scheme", "nvfp4", "--rule", "te-nvfp4-divide", "--kernel", spec]
    proc = run_gates(tmp_path, *argv, "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    (row,) = json.loads((tmp_path / "r.json").read_text())
    assert (row["kernel"], row["status"], row["scheme"], row["rule"], row["cases"]) == (
        spec,
        "PASS",
        "nvfp4",
        "te-nvfp4-divide",
        396,
    )


@pytest.mark.parametrize(("defect", "symbol"), DEFECTS.items())
def test_gq_fails_every_planted_defect(libs: dict[str, Path], defect: str, symbol: str) -> None:
    """float32 inputs only (half the time): each defect fails some of the 198 calls."""
    assert _gq(libs[defect], symbol, ("float32",)) is GateStatus.FAIL
