"""Build the ``cuda-host`` library: the CUDA C sources compiled for the host by g++.

The sources (``fp8lab_cuda.cuh``, ``host_abi.cu``) include ``cuda_fp8.h``, so
the build needs the CUDA headers, taken from PyPI wheels and never from a
local toolkit: ``nvidia-cuda-runtime`` (cuda_fp8.h,
cuda_fp8.hpp), ``nvidia-cuda-crt`` (crt/host_defines.h) and
``nvidia-cuda-cccl`` (nv/target), all CUDA 13 (pinned in constraints.txt,
installed by the ``cuda-host`` extra). ``FP8LAB_CUDA_INCLUDE`` (a path list)
overrides the search, ``CXX`` the compiler. The library lands in a cache
directory keyed by a hash of the sources, headers, defines and compiler
(``FP8LAB_CACHE``, else ``~/.cache/fp8lab``), never in the source tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fp8lab.runtime.extras import CUDA_HOST, install_line

__all__ = [
    "HEADER_WHEELS",
    "SOURCES",
    "CudaHostBuildError",
    "build_cuda_host",
    "cuda_include_dirs",
    "source_text",
]

SOURCES = ("fp8lab_cuda.cuh", "device_kernels.cu", "host_abi.cu")
HEADER_WHEELS = ("nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-cuda-cccl")
_NEEDED = ("cuda_fp8.h", "cuda_fp8.hpp", "crt/host_defines.h", "nv/target")
_SRC_DIR = Path(__file__).resolve().parent
_FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC", "-ffp-contract=off", "-fno-fast-math")


class CudaHostBuildError(RuntimeError):
    """The host build cannot run here (``missing``: no compiler, no headers) or failed."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def source_text(name: str) -> str:
    """The text of one of :data:`SOURCES` (package data)."""
    return (_SRC_DIR / name).read_text(encoding="utf-8")


def _abi_dir() -> Path:
    return _SRC_DIR.parent / "abi"


def _candidates() -> list[list[Path]]:
    env = os.environ.get("FP8LAB_CUDA_INCLUDE")
    if env:
        return [[Path(p) for p in env.split(os.pathsep) if p]]
    found = []
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        found.append([base / "cu13" / "include"])
        found.append([base / d / "include" for d in ("cuda_runtime", "cuda_nvcc", "cuda_cccl")])
    return found


def cuda_include_dirs() -> list[Path]:
    """Include directories holding every header the host build needs.

    Raises:
        CudaHostBuildError: naming the wheels to install when none is found.
    """
    for dirs in _candidates():
        if all(any((d / h).is_file() for d in dirs) for h in _NEEDED):
            return dirs
    raise CudaHostBuildError(
        "CUDA headers not found (need cuda_fp8.h, crt/host_defines.h, nv/target): "
        f"{install_line(CUDA_HOST)} (wheels {', '.join(HEADER_WHEELS)}) "
        "or set FP8LAB_CUDA_INCLUDE",
        missing=True,
    )


def _compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    path = shutil.which(cxx)
    if path is None:
        raise CudaHostBuildError(
            f"C++ compiler {cxx!r} not found: install g++ or set CXX", missing=True
        )
    return path


def _cache_root() -> Path:
    env = os.environ.get("FP8LAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "fp8lab"


def _key(cxx: str, includes: Sequence[Path], defines: Sequence[str]) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(source_text(name).encode())
    h.update((_abi_dir() / "fp8lab_kernel.h").read_bytes())
    for d in includes:
        h.update((d / "cuda_fp8.hpp").read_bytes() if (d / "cuda_fp8.hpp").is_file() else b"")
    h.update("\0".join([cxx, *map(str, includes), *_FLAGS, *defines]).encode())
    return h.hexdigest()[:20]


def build_cuda_host(defines: Sequence[str] = ()) -> Path:
    """Compile ``host_abi.cu`` with g++ (cached) and return the shared library's path.

    Args:
        defines: extra ``-D`` switches (the meta tests plant defects with them).

    Raises:
        CudaHostBuildError: no compiler, no headers, or a compile error (its first line).
    """
    cxx = _compiler()
    includes = cuda_include_dirs()
    target = _cache_root() / "cuda-host" / _key(cxx, includes, defines) / "libfp8lab_cuda_host.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    src_dir = _SRC_DIR
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        staged = Path(tmp) / target.name
        cmd = [cxx, *_FLAGS, "-x", "c++", f"-I{src_dir}", f"-I{_abi_dir()}"]
        cmd += [f"-I{d}" for d in includes] + [f"-D{d}" for d in defines]
        cmd += [str(src_dir / "host_abi.cu"), "-o", str(staged)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr)
            raise CudaHostBuildError(f"g++ failed to build cuda-host: {first.strip()[:300]}")
        os.replace(staged, target)  # atomic: concurrent builders agree
    return target
