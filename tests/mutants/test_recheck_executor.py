"""The equivalence re-check sweeps on the executor it is given (``mutate --scheduler``)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest

from fp8lab.mutants.equivalence import recheck_equivalents
from fp8lab.mutants.runner import load_equivalents


class _StopError(Exception):
    pass


class _Refusing(Executor):
    """Records the first task it is handed, then stops the run."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.seen.append(fn.__name__)
        raise _StopError


def test_the_exhaustive_sweep_runs_on_the_given_executor() -> None:
    key, entry = next(iter(sorted(load_equivalents().items())))
    pool = _Refusing()
    with pytest.raises(_StopError):
        recheck_equivalents({key: entry}, executor=pool, workers=2)
    assert pool.seen == ["sweep_chunk"]
