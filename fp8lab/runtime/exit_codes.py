"""The gates' exit statuses by name, importable without numpy (every subcommand's: docs/cli.md)."""

from __future__ import annotations

__all__ = ["EXIT_CODES"]

EXIT_CODES = {"pass": 0, "fail": 1, "usage": 2, "pending": 3}
