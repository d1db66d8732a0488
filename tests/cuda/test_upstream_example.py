"""examples/kernels/upstream_quant.cpp builds against the PyPI CUDA headers and passes G1.

Its planted defects, compiled in with -D, fail G1 (a DIVIDE) and G2h's quant
comparison (NOSAT: overflow past 464 is NaN).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fp8lab.cuda import cuda_include_dirs
from fp8lab.gates import GateStatus, run_g1, run_g2h
from fp8lab.kernels import load_shared
from fp8lab.kernels.sources.shared_abi import ABI_HEADER
from tests.cuda.conftest import host_library, needs_gxx

pytestmark = pytest.mark.process

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kernels" / "upstream_quant.cpp"


def build(out: Path, defect: str = "") -> Path:
    flags = [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    includes = [f"-I{d}" for d in cuda_include_dirs()] + [f"-I{ABI_HEADER.parent}"]
    cmd = ["g++", "-O2", "-shared", "-fPIC", *includes, *flags, str(EXAMPLE), "-o", str(out)]
    subprocess.run(cmd, check=True)
    return out


@needs_gxx
@pytest.mark.parametrize(("defect", "status"), [("", GateStatus.PASS), ("DIVIDE", GateStatus.FAIL)])
def test_upstream_example_under_g1(tmp_path: Path, defect: str, status: GateStatus) -> None:
    host_library()
    lib = build(tmp_path / "libu.so", defect)
    result = run_g1(load_shared(lib, "fp8lab_quant", nan_policy="clamp-pos"))
    assert result.status is status, result.reason


@needs_gxx
@pytest.mark.parametrize(("defect", "status"), [("", GateStatus.PASS), ("NOSAT", GateStatus.FAIL)])
def test_upstream_example_against_cuda_host_under_g2h(
    tmp_path: Path, defect: str, status: GateStatus
) -> None:
    host_library()
    lib = build(tmp_path / "libu.so", defect)
    kernel = load_shared(lib, "fp8lab_quant", nan_policy="clamp-pos")
    result = run_g2h(kernel, patterns=((0x43E0_0000, 0x43E1_0000),))
    assert result.status is status, result.reason
