"""Run independent tasks on an executor (default: one spawned process per core).

Workers die with their parent (``PR_SET_PDEATHSIG`` on Linux) and ignore
SIGINT: a Ctrl-C or SIGTERM reaches the parent, whose :func:`worker_pool`
then kills every worker before the exception goes on. Nothing waits for a
running task once the parent is interrupted.

Every step that a raise must not cut in two (a submit, which may start a
worker; a future's lock) runs with signals deferred
(:func:`fp8lab.runtime.proctree.signals_deferred`); the waits are where a
signal lands.

Any ``concurrent.futures.Executor`` can run the tasks instead, e.g. a dask
cluster's (:mod:`fp8lab.runtime.cluster`). A worker that dies is reported the same way
on either: :class:`WorkerLostError`.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

from fp8lab.runtime.proctree import die_with_parent, signals_deferred
from fp8lab.runtime.progress import Progress

__all__ = [
    "QUIET_THREADS_ENV",
    "WorkerLostError",
    "default_workers",
    "each_done",
    "run_tasks",
    "worker_pool",
]

# OpenMP's and OpenBLAS's idle threads sleep at once instead of spinning for a while: on a
# few shared cores a spinning thread holds the core that another process's work waits for.
# Neither changes a result (a sum's order depends on the thread count and blocking only).
QUIET_THREADS_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}

T = TypeVar("T")


class WorkerLostError(RuntimeError):
    """A worker process died while running a task (local pool or dask, after its retries)."""


def _lost_worker(exc: BaseException) -> bool:
    """True for a dead local worker, or a task dask gave up on after its workers died."""
    if isinstance(exc, BrokenProcessPool):
        return True
    distributed = sys.modules.get("distributed")  # imported only when a dask executor is used
    return distributed is not None and isinstance(exc, distributed.KilledWorker)


def default_workers() -> int:
    """One worker per core this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_TRACKER_FILTER = "ignore:resource_tracker:UserWarning"


def _worker_init(parent: int) -> None:
    """In each worker: die with the parent; leave SIGINT to the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.kill()
    for proc in workers:
        proc.join(5.0)
    pool.shutdown(wait=True)  # the manager thread releases the queues: no leaked semaphore


@contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A spawn-context process pool that is shut down on success and killed on any exception.

    Args:
        workers: processes.
    """
    # A pool killed on purpose (a kernel under test died in it) leaves semaphores its
    # resource tracker cleans up at exit, saying so on stderr; the command has already said
    # what happened in one line. The filter reaches the tracker process through the
    # interpreter's -W options, so it is set before the tracker starts.
    if _TRACKER_FILTER not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_FILTER)
    with signals_deferred():
        pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
            initargs=(os.getpid(),),
        )
    try:
        yield pool
        pool.shutdown()  # a signal while the workers finish ends them like any other raise
    except BaseException:
        _kill_workers(pool)
        raise


def run_tasks(
    func: Callable[..., T],
    tasks: Sequence[tuple[Any, ...]],
    *,
    workers: int,
    executor: Executor | None = None,
    report: Progress | None = None,
) -> list[T]:
    """``[func(*task) for task in tasks]``, in completion order.

    Args:
        func: a module-level function (workers import it by name).
        tasks: argument tuples.
        workers: processes when no executor is given; 1 runs here, in order.
        executor: run on this executor instead (it is not shut down).
        report: progress to update after each task, from whichever worker
            finishes it, so the count aggregates across all workers.

    Raises:
        WorkerLostError: if a worker died (a local pool breaks at once; dask
            reschedules the task and gives up after its allowed failures).
    """
    if executor is None and workers == 1:
        results: list[T] = []
        for i, task in enumerate(tasks):
            results.append(func(*task))
            if report:
                report.update(i + 1)
        return results
    if executor is None:
        with worker_pool(workers) as pool:
            return _collect(pool, func, tasks, report)
    return _collect(executor, func, tasks, report)


def each_done(futures: Iterable[Future[T]]) -> Iterator[Future[T]]:
    """``futures`` as each is done, in the order they finish.

    Like ``concurrent.futures.as_completed``, except where a signal may land:
    only in the wait for the next future, never while a future's lock is held
    (``as_completed`` takes every future's lock in a loop a signal can break,
    and a lock left held hangs the thread that finishes that future).
    """
    done: queue.SimpleQueue[Future[T]] = queue.SimpleQueue()
    with signals_deferred():
        waiting = list(futures)
        for future in waiting:
            future.add_done_callback(done.put)
    for _ in waiting:
        yield done.get()


def _collect(
    pool: Executor,
    func: Callable[..., T],
    tasks: Sequence[tuple[Any, ...]],
    report: Progress | None,
) -> list[T]:
    results: list[T] = []
    futures: list[Future[T]] = []
    try:
        with signals_deferred():  # a worker the pool starts is one it knows of
            futures += [pool.submit(func, *task) for task in tasks]
        for i, future in enumerate(each_done(futures)):
            with signals_deferred():  # it is done: no call on it waits
                exc = future.exception()
            if exc is not None:
                if _lost_worker(exc):
                    raise WorkerLostError(" ".join(str(exc).split()) or type(exc).__name__) from exc
                raise exc
            with signals_deferred():
                results.append(future.result())
            if report:
                report.update(i + 1)
    finally:
        with signals_deferred():
            for future in futures:
                future.cancel()
    return results
