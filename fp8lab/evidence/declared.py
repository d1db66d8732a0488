"""What a complete run of a notebook must contain, read from the notebook itself.

A run's manifest lists its files with their sha256, but a manifest that drops
a file from its list would hide the loss. So what a run must hold comes from
the notebook's declaration: its report, its executed copy, and each table and
figure its code cells write at the top level (``out.table("name", ...)``,
``out.figure(fig, "name")``, ``out.summary(...)``) with a literal name. A call
under ``if``, ``for``, ``while``, ``with`` or ``try`` may not run (torch's
figure, say), so it declares nothing.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

__all__ = ["declared_files", "run_file_problems"]

_WRITERS = {"table": "tables/{}.json", "figure": "figures/{}.svg"}
_LEFT_OUT = {"manifest.json"}  # the manifest lists every file but itself


def _name_of(call: ast.Call, method: str) -> str | None:
    args = call.args
    arg = args[0] if method == "table" and args else args[1] if len(args) > 1 else None
    if arg is None:
        arg = next((k.value for k in call.keywords if k.arg == "name"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _top_level_calls(source: str) -> list[ast.Call]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr | ast.Assign) and isinstance(stmt.value, ast.Call):
            calls.append(stmt.value)
    return calls


def declared_files(notebook: Path) -> frozenset[str]:
    """The files every complete run of ``notebook`` holds (relative to the run folder)."""
    try:
        cells = json.loads(notebook.read_text())["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset({"report.html"})
    files = {"report.html", notebook.name}
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        for call in _top_level_calls(source if isinstance(source, str) else "".join(source)):
            func = call.func
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
                continue
            if func.value.id != "out":
                continue
            if func.attr == "summary":
                files.add("tables/report_summary.json")
            elif func.attr in _WRITERS and (name := _name_of(call, func.attr)) is not None:
                files.add(_WRITERS[func.attr].format(name))
    return frozenset(files)


def run_file_problems(
    directory: Path, listed: dict[str, str], required: frozenset[str]
) -> list[str]:
    """``not fresh: FILE (why)`` for each required file not listed, and each unlisted file.

    Args:
        directory: the run folder.
        listed: the manifest's files (name -> sha256).
        required: the files the notebook declares (:func:`declared_files`).
    """
    problems = [f"not fresh: {name} (declared by the notebook, not in the manifest)"
                for name in sorted(required - set(listed))]  # fmt: skip
    present = {
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() or p.is_symlink()
    }
    problems += [
        f"not fresh: {name} (in the run folder, not in the manifest)"
        for name in sorted(present - set(listed) - _LEFT_OUT)
    ]
    return problems
