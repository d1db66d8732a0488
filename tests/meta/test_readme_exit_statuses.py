"""Issue 10: the README's exit-status table has a row for every subcommand."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from fp8lab.cli.main import build_parser

README = Path(__file__).resolve().parents[2] / "docs" / "manual.md"


def test_readme_exit_table_covers_every_subcommand() -> None:
    text = README.read_text()
    section = text.split("### Exit statuses and bad input", 1)[1].split("\n#", 1)[0]
    rows = set(re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.MULTILINE))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert rows == set(sub.choices), (rows, set(sub.choices))
