"""Run independent tasks on an executor (default: one spawned process per core)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from fp8lab.progress import Progress

__all__ = ["default_workers", "run_tasks"]

T = TypeVar("T")


def default_workers() -> int:
    """One worker per core this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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
        report: progress to update after each task.
    """
    results: list[T] = []
    if executor is None and workers == 1:
        for i, task in enumerate(tasks):
            results.append(func(*task))
            if report:
                report.update(i + 1)
        return results
    pool = executor or ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(func, *task) for task in tasks]
        for i, future in enumerate(as_completed(futures)):
            results.append(future.result())
            if report:
                report.update(i + 1)
    finally:
        if executor is None:
            pool.shutdown(cancel_futures=True)
    return results
