"""Progress lines on stderr: a bar on a terminal, a line per tenth otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Report ``done`` of ``total`` steps with elapsed time and an estimate.

    Args:
        label: what is running.
        total: number of steps.
        stream: where to write; None is silent.
    """

    def __init__(self, label: str, total: int, stream: TextIO | None = sys.stderr) -> None:
        self.label, self.total, self.stream = label, max(total, 1), stream
        self.start = time.monotonic()
        self._last_tenth = -1
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.start

    def update(self, done: int) -> None:
        """Report that ``done`` steps are complete."""
        if self.stream is None:
            return
        fraction = done / self.total
        eta = max(0.0, self.elapsed / fraction - self.elapsed) if fraction else float("nan")
        bar = "#" * int(30 * fraction)
        line = (
            f"{self.label}: [{bar:<30}] {100 * fraction:5.1f}% "
            f"{self.elapsed:6.1f} s elapsed, ~{eta:5.1f} s left"
        )
        if self._tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        elif int(10 * fraction) > self._last_tenth:
            self._last_tenth = int(10 * fraction)
            self.stream.write(line + "\n")
        self.stream.flush()
