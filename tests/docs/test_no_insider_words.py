"""What users read cites no issue numbers, no notes outside the repository and no machine paths.

Scanned: README.md, the package (docstrings, comments, help text, data), the
notebooks, the examples and scripts, the Makefile, pyproject.toml, the CI
script, the tests (all but this file, which holds the examples the scan must
catch) and the manual (``docs/``, ``mkdocs.yml``). Beside issue numbers and
notes outside the repository, the scan catches a work session or a helper's
report cited as a source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSIDER = re.compile(
    r"[Ii]ssue \d+|fp8-facts|schemes-and-order|\.\./shared/|/work/main|/root/|/home/[a-z]"
    r"|[Tt]his session|work session|helper report"
)
SCANNED = (
    "README.md",
    "fp8lab",
    "notebooks",
    "examples",
    "scripts",
    "Makefile",
    "pyproject.toml",
    ".ci",
    "tests",
    "docs",
    "mkdocs.yml",
)
SUFFIXES = {
    ".py",
    ".ipynb",
    ".md",
    ".toml",
    ".h",
    ".cu",
    ".cuh",
    ".cpp",
    ".css",
    ".yml",
    ".json",
    "",
}
SKIPPED = {Path(__file__).resolve()}  # this file: it holds the examples the scan must catch


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            found.append(path)
            continue
        for p in sorted(path.rglob("*")):
            parts = p.relative_to(ROOT).parts  # notebooks/runs: interactive output, not shipped
            if p.resolve() in SKIPPED or not p.is_file() or p.suffix not in SUFFIXES:
                continue
            if not {"__pycache__", "runs"} & set(parts):
                found.append(p)
    return found


def test_nothing_a_user_reads_cites_insider_notes() -> None:
    files = _files()
    assert len(files) > 150
    hits = []
    for path in files:
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if INSIDER.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert hits == []


@pytest.mark.parametrize(
    "line",
    [
        "see issue 12 §3",
        "(fp8-facts §3)",
        "schemes-and-order §5.1",
        "/work/main/results",
        "this session had no copy",
        "in the s4-order helper report",
    ],
)
def test_the_scan_catches_each_kind(line: str) -> None:
    assert INSIDER.search(line)
