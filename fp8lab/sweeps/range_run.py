"""One range value for every 2**32 and 2**31 runner: the patterns, the chunks, where they run.

A runner (:func:`fp8lab.sweeps.exhaustive.run_exhaustive`,
:func:`fp8lab.detect.brute.brute_force`, :func:`fp8lab.detect.crosscheck.crosscheck`,
:func:`fp8lab.sweeps.amax.sweep_pair`) takes one :class:`RangeRun` instead of
spelling out the same six keywords; the value checks its range against the
runner's domain, cuts it into chunks and says where they run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, replace

from fp8lab.runtime.cluster import ambient_cluster
from fp8lab.runtime.parallel import default_workers, worker_pool
from fp8lab.runtime.progress import Progress

__all__ = [
    "ALL_PATTERNS",
    "DEFAULT_CHUNK",
    "EVERY_PATTERN",
    "Placement",
    "RangeRun",
    "sharing_workers",
]

ALL_PATTERNS = 1 << 32  # every float32 bit pattern
DEFAULT_CHUNK = 1 << 22  # patterns per task: 1,024 tasks over 2**32


@dataclass(frozen=True)
class Placement:
    """Where a run's chunks go: an executor (None: a pool of ``workers`` processes) and its name."""

    executor: Executor | None
    workers: int
    name: str


@dataclass(frozen=True)
class RangeRun:
    """The patterns ``[start, stop)`` in chunks, and where and how visibly they run.

    Args:
        start: first bit pattern.
        stop: one past the last; None: the whole domain of the runner.
        chunk: patterns per task.
        workers: processes; None: one per core; 1 runs in this process.
        executor: run the chunks here instead (any ``concurrent.futures`` Executor).
        progress: factory ``(label, total) -> Progress``; None is silent.
        executor_name: what ``executor`` is, for the record (``dask ...``).
    """

    start: int = 0
    stop: int | None = None
    chunk: int = DEFAULT_CHUNK
    workers: int | None = None
    executor: Executor | None = None
    progress: Callable[[str, int], Progress] | None = None
    executor_name: str = "processes"

    def bounds(self, domain: int = ALL_PATTERNS, what: str = "pattern range") -> tuple[int, int]:
        """``(start, stop)`` inside ``[0, domain]``, the stop filled in.

        Raises:
            ValueError: for an empty range, one outside the domain, or a chunk below 1.
        """
        stop = domain if self.stop is None else self.stop
        if not 0 <= self.start < stop <= domain:
            size = f"2**{domain.bit_length() - 1}"
            raise ValueError(f"{what} [{self.start:#x}, {stop:#x}) is empty or outside {size}")
        if self.chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {self.chunk}")
        return self.start, stop

    def chunks(self, ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        """Each of ``ranges`` cut into ``[lo, hi)`` pieces of at most ``chunk`` patterns."""
        return [
            (lo, min(lo + self.chunk, hi))
            for r_lo, hi in ranges
            for lo in range(r_lo, hi, self.chunk)
        ]

    def placement(self) -> Placement:
        """The executor, worker count and name the chunks run on.

        With neither an executor nor a worker count, the cluster
        ``$FP8LAB_SCHEDULER`` names takes the chunks
        (:func:`fp8lab.runtime.cluster.ambient_cluster`); else a pool of one process per core.
        """
        if self.executor is None and self.workers is None and (ambient := ambient_cluster()):
            return Placement(ambient.executor, ambient.workers, ambient.name)
        return Placement(self.executor, self.workers or default_workers(), self.executor_name)

    def reporter(self, label: str, total: int) -> Progress | None:
        """The progress report for ``total`` chunks, or None when silent."""
        return self.progress(label, total) if self.progress else None


EVERY_PATTERN = RangeRun()  # the whole domain, one process per core (or the ambient cluster)


@contextmanager
def sharing_workers(run: RangeRun) -> Iterator[RangeRun]:
    """``run``, its chunks going to one pool of worker processes for as long as the block lasts.

    A study that runs several sweeps of fp8lab's own tasks one after another
    starts the workers once instead of once per sweep (each start imports numpy
    and loads the compiled loops again). A run that names an executor, runs
    here (one worker) or goes to the ambient cluster is given back as it is.
    Records are the same: the pool has the worker count the run would have had.
    """
    place = run.placement()
    if place.executor is not None or place.workers == 1:
        yield run
        return
    with worker_pool(place.workers) as pool:
        yield replace(run, executor=pool, workers=place.workers)
