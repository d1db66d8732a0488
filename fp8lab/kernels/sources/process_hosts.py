"""One isolated kernel per process and source, for harnesses that name kernels by string.

The exhaustive proof and the detectors resolve a ``MODULE:FUNC`` by name in
each worker process (and once in the parent, to refuse a bad name before any
work). :func:`process_host` gives each process one :class:`KernelHost` per
(kind, source, run) and ends it, with everything it started, when that
process exits. No worker imports the user's module: it only talks to the
child.

The watchdog of these hosts is :data:`KERNEL_TIMEOUT_ENV` when set (the
commands set it from ``--kernel-timeout``; spawned workers inherit it), else
:data:`fp8lab.kernels.sources.isolated.DEFAULT_KERNEL_TIMEOUT`.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing.util
import os
from typing import Any

from fp8lab.kernels.sources.isolated import DEFAULT_KERNEL_TIMEOUT, KernelHost

__all__ = ["KERNEL_TIMEOUT_ENV", "close_process_hosts", "kernel_timeout", "process_host"]

KERNEL_TIMEOUT_ENV = "FP8LAB_KERNEL_TIMEOUT"

_HOSTS: dict[tuple[int, str], KernelHost] = {}


def kernel_timeout() -> float:
    """The per-call watchdog of this process's hosts, in seconds.

    Raises:
        ValueError: if :data:`KERNEL_TIMEOUT_ENV` is set to something that is not
            a positive number.
    """
    text = os.environ.get(KERNEL_TIMEOUT_ENV, "")
    if not text:
        return DEFAULT_KERNEL_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{KERNEL_TIMEOUT_ENV}={text!r:.40}: want a positive number of seconds")
    return value


def process_host(
    kind: str, source: str, *, nan_policy: str | None = None, run: dict[str, Any] | None = None
) -> KernelHost:
    """This process's host of ``source`` as a ``kind`` kernel (started on first use)."""
    key = (os.getpid(), json.dumps([kind, source, nan_policy, run], sort_keys=True))
    host = _HOSTS.get(key)
    if host is None:
        if not _HOSTS:
            atexit.register(close_process_hosts)
            # a pool worker leaves through multiprocessing's exit, which skips atexit
            multiprocessing.util.Finalize(None, close_process_hosts, exitpriority=100)
        host = KernelHost(kind, source, nan_policy=nan_policy, run=run, timeout=kernel_timeout())
        _HOSTS[key] = host
    return host


def close_process_hosts() -> None:
    """End this process's hosts and everything they started."""
    pid = os.getpid()
    for key in [k for k in _HOSTS if k[0] == pid]:
        _HOSTS.pop(key).close()
