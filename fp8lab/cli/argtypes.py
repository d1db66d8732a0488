"""Argument checks shared by the subcommands: refuse bad input before any work.

Each ``*_arg`` is an argparse ``type=``: a bad value becomes one line and exit
status 2. The path checks run before a subcommand starts, so a target that
cannot be written is found before the run, not after it.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from fp8lab.runtime.parallel import default_workers

__all__ = [
    "check_memory",
    "MAX_WORKERS",
    "check_json_target",
    "check_writable_dir",
    "multiple_of_arg",
    "nonnegative_int_arg",
    "pattern_arg",
    "positive_float_arg",
    "positive_int_arg",
    "stop_arg",
    "workers_arg",
]

ALL_PATTERNS = 1 << 32
MAX_WORKERS = 4 * default_workers()  # more processes than 4 per core only thrash


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def positive_int_arg(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def nonnegative_int_arg(text: str) -> int:
    """An integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def pattern_arg(text: str) -> int:
    """A float32 bit-pattern bound in [0, 2**32] (decimal or 0x...)."""
    value = _int(text)
    if not 0 <= value <= ALL_PATTERNS:
        raise argparse.ArgumentTypeError(f"must be a bit pattern in [0, 2**32], got {text!r}")
    return value


def stop_arg(text: str) -> int:
    """One past the last bit pattern: in [1, 2**32] (an empty range is refused)."""
    value = pattern_arg(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be in [1, 2**32]; 0 would examine nothing")
    return value


def positive_float_arg(text: str) -> float:
    """A finite real > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def workers_arg(text: str) -> int:
    """Worker processes: 1 to MAX_WORKERS (4 per usable core); 0 is refused, not "default"."""
    value = _int(text)
    if not 1 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"must be 1 to {MAX_WORKERS} (4 per usable core), got {text!r}; "
            "leave it out for one per core"
        )
    return value


def multiple_of_arg(step: int) -> Callable[[str], int]:
    """A positive integer that is a multiple of ``step``."""

    def check(text: str) -> int:
        value = positive_int_arg(text)
        if value % step:
            raise argparse.ArgumentTypeError(f"must be a multiple of {step}, got {text!r}")
        return value

    check.__name__ = f"multiple_of_{step}"
    return check


def _probe_dir(directory: Path) -> str | None:
    """Why no file can be created in ``directory`` (nearest existing ancestor), or None."""
    probe = directory
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        return f"cannot create files in {probe}: {os.strerror(exc.errno or 0)}"
    return None


def check_json_target(path: str | None) -> str | None:
    """Why ``--json PATH`` cannot be written, or None ("-" and no path are fine).

    Refused: an existing path (nothing is overwritten), a parent that is a
    file, a directory in which no file can be created.
    """
    if path is None or path == "-":
        return None
    target = Path(path)
    if target.exists() or target.is_symlink():
        return f"--json {path} exists; nothing is overwritten"
    reason = _probe_dir(target.parent)
    return f"--json {path}: {reason}" if reason else None


def check_writable_dir(path: str, flag: str) -> str | None:
    """Why ``flag PATH`` cannot be used as a directory to write into, or None."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        return f"{flag} {path} is not a directory"
    reason = _probe_dir(target)
    return f"{flag} {path}: {reason}" if reason else None


def check_memory(need: int, what: str) -> str | None:
    """Why ``need`` bytes for ``what`` cannot be allocated here (over half the memory available).

    Checked before anything is allocated, so an absurd size is one line, not a
    MemoryError or a machine that swaps.
    """
    import psutil

    available = int(psutil.virtual_memory().available)
    if need <= available // 2:
        return None
    return (
        f"{what} need about {need / 2**30:,.1f} GiB; this machine has "
        f"{available / 2**30:,.1f} GiB available (at most half of it is used)"
    )
