"""Why an executed notebook is not complete, in the user's terms.

A run is complete only when every code cell has an execution count and no
output is an error; a cell timeout or a dead kernel can leave cells looking
completed, so this reads the executed notebook rather than trusting papermill.

Cells are numbered as the user sees the notebook: from 1, every cell
(markdown too), without the cells papermill inserts (the injected parameters
and the error banner). An error names the cell, the line in that cell, the
source of that line, and the exception with its message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat

__all__ = ["PAPERMILL_TAGS", "execution_problems", "user_cells"]

PAPERMILL_TAGS = frozenset({"injected-parameters", "papermill-error-cell-tag"})
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython >= 8: "Cell In[3], line 2"; older: "Input In [3], in <cell line: 2>()".
_CELL_LINE = re.compile(r"Cell In\s*\[\d*\], line (\d+)|<cell line: (\d+)>")


def user_cells(nb: Any) -> list[tuple[int, Any]]:
    """``(number, cell)`` for the notebook's own cells, numbered from 1."""
    own = [c for c in nb.cells if not PAPERMILL_TAGS & set(c.metadata.get("tags", []))]
    return list(enumerate(own, 1))


def _error_line(cell: Any, error: Any) -> str:
    """``line N `source`: `` for the line of ``cell`` that raised, or "" if unknown."""
    for frame in error.get("traceback", []):
        match = _CELL_LINE.search(_ANSI.sub("", frame))
        if match:
            number = int(match[1] or match[2])
            lines = str(cell.source).splitlines()
            text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            return f" line {number} `{text}`" if text else f" line {number}"
    return ""


def _describe(number: int, cell: Any, error: Any) -> str:
    name = error.get("ename") or "an error"
    message = str(error.get("evalue") or "").strip()
    return f"cell {number}{_error_line(cell, error)} raised {name}" + (
        f": {message}" if message else ""
    )


def _numbers(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"cell {numbers[0]} never executed"
    return f"cells {', '.join(map(str, numbers))} never executed"


def execution_problems(path: Path) -> list[str]:
    """Why an executed notebook is not complete; empty when it is."""
    if not path.exists():
        return ["no executed notebook was written"]
    nb = nbformat.read(path, as_version=4)
    problems, never = [], []
    for number, cell in user_cells(nb):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            never.append(number)
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            problems.append(_describe(number, cell, errors[0]))
    if never:
        problems.append(_numbers(never))
    if nb.metadata.get("papermill", {}).get("exception"):
        problems.append("papermill recorded an exception")
    return problems
