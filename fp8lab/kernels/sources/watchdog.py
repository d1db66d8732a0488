"""The watchdog on a user's kernel: how long one call may take, its default and its one check.

Every command that runs a kernel in a process of its own takes
``--kernel-timeout`` through :func:`kernel_timeout`; the hosts of harnesses
that name kernels by string read it from :data:`KERNEL_TIMEOUT_ENV`, which the
command sets and spawned workers inherit. Importing this module loads no numpy.
"""

from __future__ import annotations

import math
import os

__all__ = [
    "DEFAULT_KERNEL_TIMEOUT",
    "KERNEL_TIMEOUT_ENV",
    "MAX_KERNEL_TIMEOUT",
    "kernel_timeout",
    "timeout_from_env",
]

DEFAULT_KERNEL_TIMEOUT = 120.0  # seconds per call: a real kernel's call takes milliseconds
MAX_KERNEL_TIMEOUT = 1e6  # about 11.6 days: longer is a typo, and overflows the clocks' arithmetic
KERNEL_TIMEOUT_ENV = "FP8LAB_KERNEL_TIMEOUT"


def kernel_timeout(value: float | str) -> float:
    """``value`` as seconds per call: a positive number up to :data:`MAX_KERNEL_TIMEOUT`.

    Raises:
        ValueError: for anything else, naming the value.
    """
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds) and seconds <= MAX_KERNEL_TIMEOUT):
        raise ValueError(
            f"want a positive number of seconds up to {MAX_KERNEL_TIMEOUT:g}, got {value!r:.40}"
        )
    return seconds


def timeout_from_env() -> float:
    """The watchdog this process's hosts use: :data:`KERNEL_TIMEOUT_ENV`, else the default.

    Raises:
        ValueError: if :data:`KERNEL_TIMEOUT_ENV` is set to something that is not
            a positive number.
    """
    text = os.environ.get(KERNEL_TIMEOUT_ENV, "")
    if not text:
        return DEFAULT_KERNEL_TIMEOUT
    try:
        return kernel_timeout(text)
    except ValueError as exc:
        raise ValueError(f"{KERNEL_TIMEOUT_ENV}: {exc}") from None
