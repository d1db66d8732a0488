"""Each table of a run against what its executed notebook showed when it ran.

A notebook writes a table (``tables/<name>.json``) and shows it in the same
call (:class:`fp8lab.evidence.filing.NotebookOutput`), so the executed
notebook holds the table as it was. The shown HTML carries the sidecar's
sha256 in its output's metadata (``fp8lab-sidecar``); that is compared
exactly. Runs filed before the metadata existed are compared cell by cell:
each shown cell against the cell the sidecar gives now (the same text; a
mapping's entries in any order, since the sidecar sorts them; a tuple shown
as the list it is stored as). Either way, a table edited after its run
differs from the notebook's recorded output.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from fp8lab.evidence.shown import summary_html, table_html
from fp8lab.specs.file_text import read_regular

__all__ = ["SIDECAR_KEY", "table_problems"]

SIDECAR_KEY = "fp8lab-sidecar"  # display metadata: {"name": ..., "sha256": ...}
MAX_NOTEBOOK_BYTES = 256 << 20
_HEX = re.compile(r"^-?0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]\d+$")
_NAME = re.compile(r"^(?:<details class='fp8lab-fold'><summary>)?(?:<p>)?<strong>([^<]*)</strong>")
_CELL = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>|<code>(.*?)</code>", re.S)
_HEAD = re.compile(r"<th style='text-align:left'>(.*?)</th>", re.S)
_SUMMARY = "report_summary"


def _shown(notebook: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each shown table's HTML and output metadata, by the table's name."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            text = output.get("data", {}).get("text/html") if isinstance(output, dict) else None
            if text is None:
                continue
            text = "".join(text) if isinstance(text, list) else str(text)
            meta = output.get("metadata", {}).get(SIDECAR_KEY) or {}
            match = _NAME.match(text)
            name = meta.get("name") or (
                html.unescape(match[1]) if match else (_SUMMARY if "fp8lab-summary" in text else "")
            )
            found.setdefault(str(name), []).append((text, meta))
    return found


def _decoded(value: Any) -> Any:
    """A sidecar's value with its hex floats read back."""
    if isinstance(value, str) and _HEX.match(value):
        return float.fromhex(value)
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if isinstance(value, dict):
        return {k: _decoded(v) for k, v in value.items()}
    return value


def _cells(text: str) -> list[str]:
    return [html.unescape(a or b) for a, b in _CELL.findall(text)]


def _same_cell(shown: str, now: str) -> bool:
    if shown == now:
        return True
    shown, now = (t.replace("(", "[").replace(")", "]") for t in (shown, now))
    return shown == now or sorted(shown.split(", ")) == sorted(now.split(", "))


def _matches(name: str, raw: bytes, shown: list[tuple[str, dict[str, Any]]]) -> bool:
    digest = hashlib.sha256(raw).hexdigest()
    if any(meta.get("sha256") for _, meta in shown):
        return any(meta.get("sha256") == digest for _, meta in shown)
    rows = _decoded(json.loads(raw))
    for text, _ in shown:
        if name == _SUMMARY:
            now = summary_html(rows)
        else:
            columns = [html.unescape(c) for c in _HEAD.findall(text)]
            now = table_html(name, columns, rows)
        old, new = _cells(text), _cells(now)
        if len(old) == len(new) and all(map(_same_cell, old, new)):
            return True
    return False


def table_problems(directory: Path, notebook_name: str) -> list[str]:
    """Tables of the run in ``directory`` that differ from its executed notebook's output."""
    path = directory / notebook_name
    try:
        raw = read_regular(path, MAX_NOTEBOOK_BYTES)
        if len(raw) > MAX_NOTEBOOK_BYTES:
            return [f"{notebook_name} is over {MAX_NOTEBOOK_BYTES:,} bytes"]
        shown = _shown(json.loads(raw))
    except (OSError, ValueError, RecursionError, AttributeError, TypeError) as exc:
        return [f"{notebook_name} unreadable ({type(exc).__name__})"]
    problems = []
    for table in sorted((directory / "tables").glob("*.json")):
        name = table.stem
        try:
            same = _matches(name, read_regular(table, MAX_NOTEBOOK_BYTES), shown.get(name, []))
        except (OSError, ValueError, RecursionError, TypeError, AttributeError):
            same = False
        if not same:
            problems.append(f"tables/{table.name} differs from what {notebook_name} showed")
    return problems
