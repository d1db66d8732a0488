"""``--scheduler tcp://HOST:PORT`` / ``--dask-local N``: where a sweep's chunks run.

Without either, a subcommand runs on local processes (``--workers``) as before.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from fp8lab.cli.argtypes import workers_arg
from fp8lab.cli.common import CliError
from fp8lab.runtime.cluster import Cluster, ClusterError, is_scheduler_address, open_cluster

__all__ = ["add_executor_args", "open_executor", "scheduler_arg"]


def scheduler_arg(text: str) -> str:
    """A dask scheduler address, ``tcp://HOST:PORT`` (or ``tls://``)."""
    if not is_scheduler_address(text):
        raise argparse.ArgumentTypeError(f"want tcp://HOST:PORT, got {text!r}")
    return text


def add_executor_args(p: argparse.ArgumentParser) -> None:
    """Add the mutually exclusive ``--scheduler`` and ``--dask-local``."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--scheduler",
        type=scheduler_arg,
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the chunks on this dask scheduler's workers (needs fp8lab[dask])",
    )
    group.add_argument(
        "--dask-local",
        type=workers_arg,
        default=None,
        metavar="N",
        help="run the chunks on a dask LocalCluster of N worker processes on loopback "
        "(needs fp8lab[dask])",
    )


@contextmanager
def open_executor(args: argparse.Namespace, *, foreign: bool = False) -> Iterator[Cluster | None]:
    """The cluster the flags ask for, or None for local processes.

    With ``foreign`` (a user's code runs in the chunks) and ``--workers 1``,
    the chunks still run in one worker process, not in this one: a kernel
    that exits or crashes ends the same way as under the default pool.

    Raises:
        CliError: for ``--workers`` with a cluster, a missing dask, or an
            unreachable scheduler.
    """
    if args.scheduler is None and args.dask_local is None:
        if foreign and getattr(args, "workers", None) == 1:
            from fp8lab.runtime.parallel import worker_pool

            with worker_pool(1) as pool:
                yield Cluster(pool, 1, "processes")
            return
        yield None
        return
    if getattr(args, "workers", None) is not None:
        raise CliError(
            "--workers counts local processes; with --scheduler or --dask-local "
            "the cluster's workers run the chunks"
        )
    try:
        with open_cluster(args.scheduler, args.dask_local) as cluster:
            yield cluster
    except ClusterError as exc:
        raise CliError(str(exc)) from None
