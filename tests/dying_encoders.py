"""Test-only encoders that kill the process running them (a dask worker), once or always.

``exit_once`` dies in the first process to claim ``$FP8LAB_TEST_DIE_DIR/died``
(an exclusive create), then behaves as the fast encoder everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode

__all__ = ["always_exit", "exit_once"]


def exit_once(x: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Kill this process the first time anywhere; the fast e4m3fn encoder afterwards."""
    marker = Path(os.environ["FP8LAB_TEST_DIE_DIR"]) / "died"
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return encode(x, "e4m3fn")
    os.close(fd)
    os._exit(1)


def always_exit(x: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Kill this process every time (os._exit: nothing a harness can catch)."""
    os._exit(1)
