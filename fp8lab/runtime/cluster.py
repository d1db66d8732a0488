"""A dask.distributed cluster as a ``concurrent.futures.Executor`` (optional extra ``[dask]``).

The sweeps keep one seam, ``Executor`` (:func:`fp8lab.runtime.parallel.run_tasks`);
this module only opens one on a cluster: ``Client(...).get_executor(...)``
("a concurrent.futures Executor for submitting tasks on this Client",
distributed/client.py).

- ``scheduler="tcp://HOST:PORT"``: an existing scheduler (``dask scheduler``)
  with its workers (``dask worker tcp://HOST:PORT``), which must import fp8lab
  and any ``MODULE:FUNC`` kernel;
- ``local=N``: a ``LocalCluster`` of N single-threaded worker processes on
  loopback (127.0.0.1), closed when the block ends.

Tasks are submitted ``pure=True`` (every chunk is a pure function of its
arguments) with :data:`RETRIES` retries of a task that raised. A worker that
dies is handled by the scheduler: it reruns the worker's tasks elsewhere and
gives up on a task after ``distributed.scheduler.allowed-failures`` deaths,
which :func:`fp8lab.runtime.parallel.run_tasks` reports as
:class:`fp8lab.runtime.parallel.WorkerLostError`.

``$FP8LAB_SCHEDULER`` (:data:`SCHEDULER_ENV`) names a scheduler for code that is
given no executor, e.g. a notebook's sweeps: ``fp8lab evidence --scheduler`` /
``--dask-local N`` sets it for the notebook kernels it starts, and
:func:`ambient_cluster` connects to it once per process.
"""

from __future__ import annotations

import atexit
import os
import re
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from fp8lab.runtime.extras import install_line

__all__ = [
    "RETRIES",
    "SCHEDULER_ENV",
    "SCHEDULER_PATTERN",
    "Cluster",
    "ClusterError",
    "ambient_cluster",
    "is_scheduler_address",
    "open_cluster",
]

RETRIES = 1
WAIT_FOR_WORKERS_S = 30.0
SCHEDULER_ENV = "FP8LAB_SCHEDULER"
SCHEDULER_PATTERN = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


class ClusterError(RuntimeError):
    """dask is not installed, or the scheduler cannot be reached or has no workers."""


@dataclass(frozen=True)
class Cluster:
    """An open cluster: its executor, its workers when opened, a name for records, its address."""

    executor: Executor
    workers: int
    name: str
    address: str = ""


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(f"dask is not installed ({exc.name}): {install_line('dask')}") from None
    return distributed


@contextmanager
def open_cluster(scheduler: str | None = None, local: int | None = None) -> Iterator[Cluster]:
    """Connect to ``scheduler`` or start a loopback ``LocalCluster`` of ``local`` workers.

    Args:
        scheduler: ``tcp://HOST:PORT`` of a running dask scheduler.
        local: worker processes of a new LocalCluster (exactly one of the two).

    Raises:
        ClusterError: if dask is missing, the scheduler is unreachable, or no
            worker joins within 30 s.
        ValueError: unless exactly one of ``scheduler`` and ``local`` is given.
    """
    if (scheduler is None) == (local is None):
        raise ValueError("give exactly one of scheduler and local")
    distributed = _import_distributed()
    with ExitStack() as stack:
        if local is not None:
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=local,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # no dashboard; its bare HTTP server on a free loopback port
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                )
            )
            client = stack.enter_context(distributed.Client(cluster))
            name = f"dask-local {local}"
        else:
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout="10s"))
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"cannot reach the dask scheduler {scheduler}: {exc}") from None
            name = f"dask {scheduler}"
        try:
            client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
        except TimeoutError:
            raise ClusterError(
                f"no dask worker joined {name} within {WAIT_FOR_WORKERS_S:.0f} s"
            ) from None
        workers = len(client.scheduler_info(n_workers=-1)["workers"])
        address = str(client.scheduler.address)
        yield Cluster(client.get_executor(pure=True, retries=RETRIES), workers, name, address)


_AMBIENT: dict[str, tuple[Cluster, ExitStack]] = {}


def _close_ambient() -> None:
    """Close every connection :func:`ambient_cluster` opened (at exit; tests call it too)."""
    while _AMBIENT:
        _, stack = _AMBIENT.popitem()[1]
        stack.close()


atexit.register(_close_ambient)


def is_scheduler_address(text: str) -> bool:
    """Whether ``text`` is ``tcp://HOST:PORT`` (or ``tls://``) with a port in 1..65535."""
    match = SCHEDULER_PATTERN.match(text)
    return bool(match) and 0 < int(match.group(3)) < 65536  # type: ignore[union-attr]


def ambient_cluster() -> Cluster | None:
    """The cluster ``$FP8LAB_SCHEDULER`` names, connected once per process; None when unset.

    Functions that would start their own pool of one process per core (no
    executor, no worker count given) run their chunks here instead. The
    connection closes when the process exits.

    Raises:
        ClusterError: if the variable is not ``tcp://HOST:PORT``, dask is
            missing, or the scheduler cannot be reached: never a silent local run.
    """
    address = os.environ.get(SCHEDULER_ENV, "")
    if not address:
        return None
    if address not in _AMBIENT:
        if not is_scheduler_address(address):
            raise ClusterError(f"${SCHEDULER_ENV} wants tcp://HOST:PORT, got {address!r}")
        stack = ExitStack()
        _AMBIENT[address] = (stack.enter_context(open_cluster(scheduler=address)), stack)
    return _AMBIENT[address][0]
