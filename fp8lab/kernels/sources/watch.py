"""What fp8lab reads of a kernel's process from outside it, never asking the process.

:class:`KernelWatch` finds the kernel's process (the child itself, or in a box
the first child of the box's PID 1, :func:`fp8lab.kernels.sources.box.kernel_pid`)
and reads its floating-point environment after each call with ptrace
(:mod:`fp8lab.runtime.fpenv_outside`). Where ptrace is not allowed, it falls
back on what the process reported and says so: ``fp_env_read`` is
``ptrace`` while every read was made from outside, ``self-reported`` from
the first one that was not.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from fp8lab.kernels.sources.box import kernel_pid
from fp8lab.runtime.fpenv import env_change
from fp8lab.runtime.fpenv_outside import DEFAULT_FP_ENV, read_fp_env_of

__all__ = ["KernelWatch"]


class KernelWatch:
    """The outside view of one kernel process started as ``proc`` (boxed or not)."""

    def __init__(self, proc: subprocess.Popen[Any], boxed: bool) -> None:
        self._proc, self._boxed = proc, boxed
        self._pid: int | None = None
        self.fp_env_read = ""

    def pid(self) -> int | None:
        """The kernel's process as this process sees it (None: not found)."""
        if self._pid is None:
            self._pid = kernel_pid(self._proc.pid) if self._boxed else self._proc.pid
        return self._pid

    def env_after(self, reported: Any) -> str:
        """What the call (or the load) left changed in the environment (``""``: nothing).

        Args:
            reported: what the kernel's process said it left, used only where
                the registers cannot be read from outside.
        """
        found = read_fp_env_of(self.pid() or -1)
        if found.exit_status is not None and not self._boxed:  # the read reaped our child
            self._proc.returncode = os.waitstatus_to_exitcode(found.exit_status)
        if found.env is None:
            self.fp_env_read = "self-reported"
            return str(reported or "")
        self.fp_env_read = self.fp_env_read or "ptrace"
        return env_change(DEFAULT_FP_ENV, found.env)
