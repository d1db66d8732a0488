"""Helpers for the bundle meta tests: build the reference runner, plant defects in files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from fp8lab.kernels.sources.shared_abi import ABI_HEADER

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "examples" / "bundle_runner" / "run_bundle.cpp"
# The example kernel each gate's runner is linked with.
KERNEL_SOURCES = {
    "G1": ROOT / "examples" / "kernels" / "vllm_cpp_quant.cpp",
    "G3": ROOT / "examples" / "kernels" / "vllm_cpp_gemm.cpp",
}


def build_runner(gate: str, out: Path, defect: str = "") -> Path:
    """g++ the reference runner with the gate's example kernel (``-DFP8LAB_DEFECT_<defect>``)."""
    gxx = shutil.which("g++")
    assert gxx, "the bundle tests build examples/bundle_runner with g++"
    exe = out / f"run_bundle_{gate}{defect}"
    flags = [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    cmd = [gxx, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{ABI_HEADER.parent}"]
    sources = [str(RUNNER), str(KERNEL_SOURCES[gate])]
    subprocess.run([*cmd, *flags, *sources, "-o", str(exe)], check=True)
    return exe


def cases(bundle: Path) -> list[dict[str, Any]]:
    """The cases of ``bundle``'s bundle.json."""
    return list(json.loads((bundle / "bundle.json").read_text())["cases"])


def flip(path: Path, offset: int, mask: int = 0x01) -> None:
    """XOR one byte of ``path`` with ``mask``."""
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))
