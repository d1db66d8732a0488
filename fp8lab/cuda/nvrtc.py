"""Compile fp8lab's device source to PTX with NVRTC from PyPI: no device, no toolkit.

G2 compiles the same source through cupy on a device. Without one, this
compiles it here, so CI can check what the device would run: for sm_89 and
later the conversion is the instruction ``cvt.rn.satfinite.e4m3x2.f32``
NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel
(CUDA 13, pinned; in the ``cuda-host`` extra) and is called through ctypes.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from fp8lab.cuda.device import device_source
from fp8lab.runtime.extras import CUDA_HOST, install_line

__all__ = ["NVRTC_WHEEL", "NvrtcError", "compile_ptx", "nvrtc_library"]

NVRTC_WHEEL = "nvidia-cuda-nvrtc"
_NAMES = (("cu13", "libnvrtc.so.13"), ("cuda_nvrtc", "libnvrtc.so.12"))


class NvrtcError(RuntimeError):
    """NVRTC is missing, or the source did not compile (the log is in the message)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def nvrtc_library() -> Path:
    """The NVRTC shared library: ``$FP8LAB_NVRTC``, else the wheel on ``sys.path``.

    Raises:
        NvrtcError: naming the wheel to install when none is found.
    """
    env = os.environ.get("FP8LAB_NVRTC")
    candidates = [Path(env)] if env else []
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        candidates += [base / sub / "lib" / name for sub, name in _NAMES]
    for path in candidates:
        if path.is_file():
            return path
    raise NvrtcError(
        f"NVRTC not found: {install_line(CUDA_HOST)} (wheel {NVRTC_WHEEL}) or set FP8LAB_NVRTC",
        missing=True,
    )


def _check(lib: ctypes.CDLL, status: int, what: str, program: ctypes.c_void_p) -> None:
    if status == 0:
        return
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(program, log)
    text = log.value.decode(errors="replace").strip()
    raise NvrtcError(f"NVRTC {what} failed ({status}): {text}")


def compile_ptx(
    arch: str = "compute_90", defines: Sequence[str] = (), source: str | None = None
) -> str:
    """PTX text of ``source`` (default: the device source with ``defines``) for ``arch``.

    Raises:
        NvrtcError: NVRTC missing, or a compile error (with NVRTC's log).
    """
    lib = ctypes.CDLL(str(nvrtc_library()))
    text = (device_source(defines) if source is None else source).encode()
    program = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(program), text, b"fp8lab.cu", 0, None, None)
    _check(lib, status, "create", program)
    try:
        options = [f"--gpu-architecture={arch}".encode(), b"--std=c++17"]
        argv = (ctypes.c_char_p * len(options))(*options)
        _check(lib, lib.nvrtcCompileProgram(program, len(options), argv), "compile", program)
        size = ctypes.c_size_t()
        _check(lib, lib.nvrtcGetPTXSize(program, ctypes.byref(size)), "PTX size", program)
        ptx = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(program, ptx), "PTX", program)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))
    return ptx.value.decode()
