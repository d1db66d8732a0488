"""The flags of every command that runs a user's kernel: its watchdog and its environment check.

``--kernel-timeout`` bounds each call (and the import) of the kernel, which runs
in a process of its own; ``--strict-env`` fails a kernel that leaves the
floating-point environment changed. Importing this module loads no numpy.
"""

from __future__ import annotations

import argparse

from fp8lab.cli.common import CliError

__all__ = [
    "DEFAULT_KERNEL_TIMEOUT",
    "add_isolation_arguments",
    "add_timeout_argument",
    "set_kernel_timeout",
]

DEFAULT_KERNEL_TIMEOUT = 120.0  # fp8lab.kernels.sources.isolated.DEFAULT_KERNEL_TIMEOUT


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse's type for ``--kernel-timeout``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"want a positive number of seconds, got {text!r:.40}")
    return value


def add_isolation_arguments(p: argparse.ArgumentParser) -> None:
    """``--kernel-timeout`` and ``--strict-env``: the watchdog and the environment check."""
    add_timeout_argument(p)
    p.add_argument(
        "--strict-env",
        action="store_true",
        help="fail a kernel that leaves the floating-point environment changed (rounding "
        "mode, flush-to-zero); by default the record names the change and the verdict "
        "on the outputs stands",
    )


def add_timeout_argument(p: argparse.ArgumentParser) -> None:
    """``--kernel-timeout``: the watchdog on each call of the user's kernel."""
    p.add_argument(
        "--kernel-timeout",
        type=_seconds,
        default=DEFAULT_KERNEL_TIMEOUT,
        metavar="SECONDS",
        help="your kernel runs in a process of its own; a call (or its import) that takes "
        f"longer ends that process and everything it started, and fails (default "
        f"{DEFAULT_KERNEL_TIMEOUT:g}; a real kernel's call takes milliseconds)",
    )


def set_kernel_timeout(seconds: float) -> None:
    """Hand ``--kernel-timeout`` to the kernel hosts of this process and its workers.

    Raises:
        CliError: for a timeout that is not a positive, finite number.
    """
    import math
    import os

    from fp8lab.kernels.sources.process_hosts import KERNEL_TIMEOUT_ENV

    if not (seconds > 0 and math.isfinite(seconds)):
        raise CliError(f"--kernel-timeout must be a positive number of seconds, got {seconds}")
    os.environ[KERNEL_TIMEOUT_ENV] = repr(float(seconds))
