"""Every subcommand's exit statuses, read from ``exit_statuses.toml``.

One source for ``fp8lab SUBCOMMAND --help`` (its epilog) and for the manual's
table (the ``{{ fp8lab:exit-statuses }}`` token, :mod:`fp8lab.cli.doc_facts`).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

__all__ = ["CODES", "exit_epilog", "exit_statuses"]

CODES = (0, 1, 2, 3, 4)
_FILE = Path(__file__).with_name("exit_statuses.toml")


@cache
def exit_statuses() -> dict[str, dict[int, str]]:
    """Per subcommand, its exit statuses: status -> when."""
    data = tomllib.loads(_FILE.read_text())
    return {name: {int(code): when for code, when in row.items()} for name, row in data.items()}


def exit_epilog(command: str) -> str:
    """The ``--help`` epilog of ``command``: each exit status and when it is given."""
    rows = exit_statuses().get(command, {})
    plain = {code: when.replace("`", "") for code, when in rows.items()}  # help is not Markdown
    listed = "; ".join(f"{code} {when}" for code, when in sorted(plain.items()))
    return f"exit status: {listed}; 130 or 143 interrupted (SIGINT, SIGTERM)." if rows else ""
