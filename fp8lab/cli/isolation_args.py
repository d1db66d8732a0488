"""The flags of every command that runs a user's kernel: its watchdog and its environment check.

``--kernel-timeout`` bounds each call (and the import) of the kernel, which runs
in a process of its own; ``--strict-env`` fails a kernel that leaves the
floating-point environment changed. Importing this module loads no numpy.
"""

from __future__ import annotations

import argparse
import os

from fp8lab.cli.argtypes import FloatRange
from fp8lab.cli.common import CliError
from fp8lab.kernels.sources.watchdog import (
    DEFAULT_KERNEL_TIMEOUT,
    KERNEL_TIMEOUT_ENV,
    MAX_KERNEL_TIMEOUT,
    kernel_timeout,
)

__all__ = [
    "add_isolation_arguments",
    "add_timeout_argument",
    "require_box",
    "set_kernel_timeout",
]


class _KernelTimeout(FloatRange):
    """``--kernel-timeout``'s type: the watchdog's own check, with its range declared."""

    def accepts(self, value: float) -> bool:
        """Whether the watchdog takes ``value`` (:func:`kernel_timeout`)."""
        try:
            kernel_timeout(value)
        except ValueError:
            return False
        return True


_SECONDS = _KernelTimeout(0.0, MAX_KERNEL_TIMEOUT, "a positive number of seconds")


def add_isolation_arguments(p: argparse.ArgumentParser) -> None:
    """``--kernel-timeout``, ``--require-box`` and ``--strict-env``."""
    add_timeout_argument(p)
    p.add_argument(
        "--strict-env",
        action="store_true",
        help="fail a kernel that leaves the floating-point environment changed (rounding "
        "mode, flush-to-zero); by default the record names the change and the verdict "
        "on the outputs stands",
    )


def add_timeout_argument(p: argparse.ArgumentParser) -> None:
    """``--kernel-timeout`` (the watchdog on each call of the kernel) and ``--require-box``."""
    p.add_argument(
        "--require-box",
        action="store_true",
        help="refuse to run (a usage error) where your kernel cannot run in a box of its own "
        "(new user, PID, mount, IPC and network namespaces, through bwrap or unshare); "
        "by default it then runs as a plain child process and every record says "
        "isolation: process",
    )
    p.add_argument(
        "--kernel-timeout",
        type=_SECONDS,
        default=DEFAULT_KERNEL_TIMEOUT,
        metavar="SECONDS",
        help="your kernel runs in a process of its own; a call (or its import) that takes "
        f"longer ends that process and everything it started, and fails (default "
        f"{DEFAULT_KERNEL_TIMEOUT:g}; a real kernel's call takes milliseconds)",
    )


def require_box() -> None:
    """``--require-box``: refuse a machine where the kernel's box cannot be made.

    Raises:
        CliError: naming why not.
    """
    from fp8lab.kernels.sources.box import BOX_ENV, box_tool

    if box_tool() is None:
        raise CliError(
            "--require-box: no box can be made here (neither bwrap nor unshare can create a "
            f"user namespace, or ${BOX_ENV} is none); your kernel would run as a plain process"
        )


def set_kernel_timeout(seconds: float) -> None:
    """Hand ``--kernel-timeout`` (checked when parsed) to this process's hosts and its workers'."""
    os.environ[KERNEL_TIMEOUT_ENV] = repr(float(seconds))
