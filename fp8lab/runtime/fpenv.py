"""The floating-point environment a call runs in: rounding mode, flush-to-zero, denormals-are-zero.

A kernel built with ``-ffast-math`` sets flush-to-zero when it loads; a C
kernel may change the rounding mode and not restore it. The kernel's child
process resets the environment to the C default before every call and reads
it back after, so a change is the kernel's finding, named in the record, and
never the references' problem (they run in another process).

Read through glibc's ``fegetenv`` on x86-64 Linux (the SSE control register
MXCSR and the x87 control word); elsewhere the environment is not measured
(:func:`read_fp_env` returns None) and nothing is claimed about it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys
from dataclasses import dataclass

__all__ = ["FpEnv", "env_change", "env_from_registers", "read_fp_env", "reset_fp_env"]

_ROUNDING = ("to nearest", "down", "up", "toward zero")  # the 2-bit RC field of both registers
_FENV_BYTES = 32  # glibc x86-64 fenv_t: x87 control word at 0, MXCSR at 28
_FE_DFL_ENV = ctypes.c_void_p(-1)  # glibc's FE_DFL_ENV: the environment a program starts in


def _libm() -> ctypes.CDLL | None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    name = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(name or "libm.so.6")
    except OSError:
        return None


_LIBM = _libm()


@dataclass(frozen=True)
class FpEnv:
    """The control bits of the floating-point environment (status flags are left out)."""

    rounding: str  # SSE (MXCSR), which numpy and compiled float code use
    flush_to_zero: bool
    denormals_are_zero: bool
    x87_rounding: str


def read_fp_env() -> FpEnv | None:
    """The environment this thread runs in, or None where it is not measured."""
    if _LIBM is None:
        return None
    buf = ctypes.create_string_buffer(_FENV_BYTES)
    if _LIBM.fegetenv(buf) != 0:
        return None
    control = int.from_bytes(buf.raw[0:2], "little")
    mxcsr = int.from_bytes(buf.raw[28:32], "little")
    return env_from_registers(control, mxcsr)


def env_from_registers(control: int, mxcsr: int) -> FpEnv:
    """The environment that an x87 control word and an MXCSR hold."""
    return FpEnv(
        rounding=_ROUNDING[(mxcsr >> 13) & 3],
        flush_to_zero=bool(mxcsr & (1 << 15)),
        denormals_are_zero=bool(mxcsr & (1 << 6)),
        x87_rounding=_ROUNDING[(control >> 10) & 3],
    )


def reset_fp_env() -> None:
    """Set this thread's environment to the C default (round to nearest, no FTZ or DAZ)."""
    if _LIBM is not None:
        _LIBM.fesetenv(_FE_DFL_ENV)


def env_change(before: FpEnv | None, after: FpEnv | None) -> str:
    """What a call left changed, in words (``""`` for nothing, or nothing measured)."""
    if before is None or after is None or before == after:
        return ""
    said = []
    if after.rounding != before.rounding:
        said.append(f"rounding {after.rounding}")
    if after.flush_to_zero != before.flush_to_zero:
        said.append("flush-to-zero " + ("on" if after.flush_to_zero else "off"))
    if after.denormals_are_zero != before.denormals_are_zero:
        said.append("denormals-are-zero " + ("on" if after.denormals_are_zero else "off"))
    if after.x87_rounding != before.x87_rounding:
        said.append(f"x87 rounding {after.x87_rounding}")
    return "the kernel left " + ", ".join(said)
