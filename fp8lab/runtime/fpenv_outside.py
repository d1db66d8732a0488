"""Another process's floating-point environment, read from outside it with ptrace.

A kernel's process could report any environment it likes; the parent reads
the kernel's thread's registers itself. :func:`read_fp_env_of` seizes the
thread (``PTRACE_SEIZE``), stops it (``PTRACE_INTERRUPT``), copies its FXSAVE
area (``PTRACE_GETFPREGS``: the x87 control word at byte 0, MXCSR at byte 24)
and lets it go (``PTRACE_DETACH``); a thread blocked in a read resumes the
read. Where the OS does not allow it (not x86-64 Linux, a Yama policy, a
process already traced or made non-dumpable by a user without the
capability), it returns None and the caller falls back on what the process
says of itself.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys

from fp8lab.runtime.fpenv import FpEnv, env_from_registers

__all__ = ["DEFAULT_FP_ENV", "OutsideRead", "read_fp_env_of"]

_PTRACE_GETFPREGS, _PTRACE_DETACH, _PTRACE_SEIZE, _PTRACE_INTERRUPT = 14, 17, 0x4206, 0x4207
_WALL = 0x40000000
_FXSAVE_BYTES = 512
DEFAULT_FP_ENV = env_from_registers(0x037F, 0x1F80)  # the C default: what a call starts in


def _libc() -> ctypes.CDLL | None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:  # glibc's name first: find_library starts ldconfig
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        except OSError:
            return None
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    return libc


_LIBC = _libc()


class OutsideRead:
    """What one read found: the environment (None: not readable), or the exit it saw instead.

    ``exit_status`` is the thread's wait status when the read reaped its end
    (it was this process's child and ended meanwhile); the caller owns it.
    """

    def __init__(self, env: FpEnv | None, exit_status: int | None = None) -> None:
        self.env, self.exit_status = env, exit_status


def read_fp_env_of(pid: int) -> OutsideRead:
    """The floating-point control state of thread ``pid``, read with ptrace."""
    if _LIBC is None or pid <= 0:
        return OutsideRead(None)
    if _LIBC.ptrace(_PTRACE_SEIZE, pid, None, None) != 0:
        return OutsideRead(None)
    try:
        if _LIBC.ptrace(_PTRACE_INTERRUPT, pid, None, None) != 0:
            return OutsideRead(None)
        try:
            _, status = os.waitpid(pid, _WALL)
        except ChildProcessError:
            return OutsideRead(None)
        if not os.WIFSTOPPED(status):
            return OutsideRead(None, status)
        area = ctypes.create_string_buffer(_FXSAVE_BYTES)
        if _LIBC.ptrace(_PTRACE_GETFPREGS, pid, None, area) != 0:
            return OutsideRead(None)
        control = int.from_bytes(area.raw[0:2], "little")
        mxcsr = int.from_bytes(area.raw[24:28], "little")
        return OutsideRead(env_from_registers(control, mxcsr))
    finally:
        _LIBC.ptrace(_PTRACE_DETACH, pid, None, None)
