"""One isolated kernel per process and source, for harnesses that name kernels by string.

The exhaustive proof and the detectors resolve a ``MODULE:FUNC`` by name in
each worker process (and once in the parent, to refuse a bad name before any
work). :func:`process_host` gives each process one :class:`KernelHost` per
(kind, source, run) and ends it, with everything it started, when that
process exits. No worker imports the user's module: it only talks to the
child.

The watchdog of these hosts is
:func:`fp8lab.kernels.sources.watchdog.timeout_from_env` (the commands set it
from ``--kernel-timeout``; spawned workers inherit it).
"""

from __future__ import annotations

import atexit
import json
import multiprocessing.util
import os
from typing import Any

from fp8lab.kernels.sources.isolated import KernelHost
from fp8lab.kernels.sources.watchdog import timeout_from_env

__all__ = ["close_process_hosts", "process_host"]

_HOSTS: dict[tuple[int, str], KernelHost] = {}


def process_host(kind: str, source: str, *, run: dict[str, Any] | None = None) -> KernelHost:
    """This process's host of ``source`` as a ``kind`` kernel (started on first use)."""
    key = (os.getpid(), json.dumps([kind, source, run], sort_keys=True))
    host = _HOSTS.get(key)
    if host is None:
        if not _HOSTS:
            atexit.register(close_process_hosts)
            # a pool worker leaves through multiprocessing's exit, which skips atexit
            multiprocessing.util.Finalize(None, close_process_hosts, exitpriority=100)
        host = KernelHost(kind, source, run=run, timeout=timeout_from_env())
        _HOSTS[key] = host
    return host


def close_process_hosts() -> None:
    """End this process's hosts and everything they started."""
    pid = os.getpid()
    for key in [k for k in _HOSTS if k[0] == pid]:
        _HOSTS.pop(key).close()
