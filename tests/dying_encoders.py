"""Test-only chunk tasks that kill the worker process running them, once or always.

A user's encoder cannot kill a worker: it runs in a child process of the
worker's. These tasks stand for what still can (the worker running out of
memory, a crash of fp8lab's own code): ``exit_once`` dies in the first
process to claim ``$FP8LAB_TEST_DIE_DIR/died`` (an exclusive create), then
compares the chunk as every worker does; ``always_exit`` dies every time. An
encoder that exits (``encoder_exits``) ends only its own process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.sweeps.exhaustive_chunks import ChunkResult, compare_chunk

__all__ = ["always_exit", "encoder_exits", "exit_once"]


def exit_once(*args: Any) -> ChunkResult:
    """Kill this process the first time anywhere; :func:`compare_chunk` afterwards."""
    marker = Path(os.environ["FP8LAB_TEST_DIE_DIR"]) / "died"
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return compare_chunk(*args)
    os.close(fd)
    os._exit(1)


def always_exit(*args: Any) -> ChunkResult:
    """Kill this process every time (os._exit: nothing a harness can catch)."""
    os._exit(1)


def encoder_exits(x: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """An encoder that exits its process on every call."""
    os._exit(1)
