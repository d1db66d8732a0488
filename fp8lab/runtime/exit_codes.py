"""Exit statuses of every subcommand (docs/manual.md "Exit statuses"), importable without numpy."""

from __future__ import annotations

__all__ = ["EXIT_CODES"]

EXIT_CODES = {"pass": 0, "fail": 1, "usage": 2, "pending": 3}
