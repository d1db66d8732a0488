"""Helpers for the bundle meta tests: build the reference runner, plant defects in files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "examples" / "bundle_runner" / "run_bundle.cpp"
KERNELS = Path(__file__).resolve().parent / "kernels"
# The kernel each gate's runner is linked with (minimal correct ports, fp8-facts §3).
KERNEL_SOURCES = {"G1": KERNELS / "quant_rne.cpp", "G3": KERNELS / "matmul_seq.cpp"}


def build_runner(gate: str, out: Path) -> Path:
    """g++ the reference runner with the gate's kernel; the executable's path."""
    gxx = shutil.which("g++")
    assert gxx, "the bundle tests build examples/bundle_runner with g++; install g++"
    exe = out / f"run_bundle_{gate}"
    cmd = [gxx, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{ROOT}"]
    subprocess.run([*cmd, str(RUNNER), str(KERNEL_SOURCES[gate]), "-o", str(exe)], check=True)
    return exe


def cases(bundle: Path) -> list[dict[str, Any]]:
    """The cases of ``bundle``'s bundle.json."""
    return list(json.loads((bundle / "bundle.json").read_text())["cases"])


def flip(path: Path, offset: int, mask: int = 0x01) -> None:
    """XOR one byte of ``path`` with ``mask``."""
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))
