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
from pathlib import Path

from fp8lab.runtime.parallel import default_workers

__all__ = [
    "MAX_COUNT",
    "MAX_SECONDS",
    "MAX_WORKERS",
    "FloatRange",
    "IntRange",
    "check_json_target",
    "check_memory",
    "check_writable_dir",
    "bounded_int_arg",
    "count_arg",
    "multiple_of_arg",
    "nonnegative_int_arg",
    "pattern_arg",
    "positive_float_arg",
    "positive_int_arg",
    "scale_arg",
    "seconds_arg",
    "seed_arg",
    "stop_arg",
    "workers_arg",
]

ALL_PATTERNS = 1 << 32
MAX_WORKERS = 4 * default_workers()  # more processes than 4 per core only thrash
MAX_COUNT = 1 << 32  # a count of inputs, scales, rounds: 2**32 is every float32 pattern
MAX_SECONDS = 1e6  # about 11.6 days: longer is a typo, and overflows the clocks' arithmetic
MAX_SEED = (1 << 63) - 1
MAX_SCALE = 2.0**60  # a scale past 2**60 maps every finite float32 below e4m3fn's subnormals


class IntRange:
    """An argparse ``type=``: an integer (decimal or 0x...) in [low, high], a multiple of step.

    ``low`` and ``high`` are the declared range, which the tests read to walk
    every numeric option.
    """

    kind = int

    def __init__(self, low: int, high: int, what: str, step: int = 1) -> None:
        self.low, self.high, self.what, self.step = low, high, what, step
        self.__name__ = what

    def accepts(self, value: float) -> bool:
        """Whether ``value`` is in the declared range (and a multiple of ``step``)."""
        return self.low <= value <= self.high and value == int(value) and not value % self.step

    def __call__(self, text: str) -> int:
        """``text`` as an integer in range; else an ``ArgumentTypeError`` (one line, exit 2)."""
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r:.40} is not an integer") from None
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(
                f"must be {self.what} in [{self.low:,}, {self.high:,}], got {text!r:.40}"
            )
        if value % self.step:
            raise argparse.ArgumentTypeError(f"must be a multiple of {self.step}, got {text!r}")
        return value


class FloatRange:
    """An argparse ``type=``: a finite real in (low, high] (``above``) or [low, high]."""

    kind = float

    def __init__(self, low: float, high: float, what: str, *, above: bool = True) -> None:
        self.low, self.high, self.what, self.above = low, high, what, above
        self.__name__ = what

    def accepts(self, value: float) -> bool:
        """Whether ``value`` is in the declared range."""
        lowest = value > self.low if self.above else value >= self.low
        return math.isfinite(value) and lowest and value <= self.high

    def __call__(self, text: str) -> float:
        """``text`` as a number in range; else an ``ArgumentTypeError`` (one line, exit 2)."""
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r:.40} is not a number") from None
        if not self.accepts(value):
            low = "(" if self.above else "["
            raise argparse.ArgumentTypeError(
                f"must be {self.what} in {low}{self.low:g}, {self.high:g}], got {text!r:.40}"
            )
        return value


positive_int_arg = IntRange(1, MAX_COUNT, "a positive integer")
nonnegative_int_arg = IntRange(0, MAX_COUNT, "an integer >= 0")
count_arg = positive_int_arg
pattern_arg = IntRange(0, ALL_PATTERNS, "a float32 bit pattern bound")
stop_arg = IntRange(1, ALL_PATTERNS, "one past the last bit pattern (0 examines nothing)")
seed_arg = IntRange(0, MAX_SEED, "a seed")
MAX_SIDE = 1 << 16  # a matrix side the probes of order and gemm infer take
side_arg = IntRange(1, MAX_SIDE, "a matrix side")
summands_arg = IntRange(2, 1 << 24, "a number of summands")
warmup_arg = IntRange(0, 1 << 10, "a number of warm-up calls")
workers_arg = IntRange(1, MAX_WORKERS, "a worker count (4 per usable core at most)")
positive_float_arg = FloatRange(0.0, MAX_SCALE, "a finite number > 0")
scale_arg = FloatRange(0.0, MAX_SCALE, "a positive finite scale")
seconds_arg = FloatRange(0.0, MAX_SECONDS, "a positive number of seconds")


def multiple_of_arg(step: int, high: int = MAX_COUNT) -> IntRange:
    """A positive integer up to ``high`` that is a multiple of ``step``."""
    return IntRange(step, high, f"a multiple of {step}", step)


def bounded_int_arg(low: int, high: int, what: str) -> IntRange:
    """An integer in [low, high], described as ``what`` in a refusal."""
    return IntRange(low, high, what)


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
