"""``results/index.json`` and ``results/index.html``: every run, newest first.

The index is a view derived from the manifests, so it is rewritten (under a
lock, atomically) after every run; the runs themselves are never touched.
"""

from __future__ import annotations

import fcntl
import html
import json
from pathlib import Path
from typing import Any

from fp8lab.evidence.manifest import scan_runs
from fp8lab.evidence.run_dir import write_atomic

__all__ = ["collect_runs", "write_index"]


def collect_runs(results: Path) -> list[dict[str, Any]]:
    """One row per run directory with a manifest, newest first.

    A run whose manifest cannot be read gets the status ``corrupt`` and the
    reason why; it sorts last and never stops the other runs from being listed.
    """
    rows = []
    for record in scan_runs(results):
        data = record.manifest
        git: dict[str, Any] = data["git"] if isinstance(data.get("git"), dict) else {}
        report = record.directory / "report.html"
        rows.append(
            {
                "kind": data.get("kind", record.directory.parent.name),
                "run_id": data.get("run_id", record.directory.name),
                "status": "corrupt" if record.corrupt else data["status"],
                "reason": record.corrupt or data["reason"],
                "started": data.get("started"),
                "finished": data.get("finished"),
                "git": git.get("short"),
                "dirty": git.get("dirty"),
                "directory": record.relative,
                "report": f"{record.relative}/report.html" if report.exists() else None,
            }
        )
    return sorted(rows, key=lambda r: (str(r["started"] or ""), str(r["run_id"])), reverse=True)


def _html(rows: list[dict[str, Any]]) -> str:
    cells = []
    for r in rows:
        link = (
            f'<a href="{html.escape(r["report"])}">report</a>'
            if r["report"]
            else f'<a href="{html.escape(r["directory"])}/">files</a>'
        )
        cells.append(
            f"<tr class='{html.escape(str(r['status']))}'><td>{html.escape(str(r['started']))}"
            f"</td><td>{html.escape(str(r['kind']))}</td><td>{html.escape(str(r['status']))}"
            f"</td><td>{html.escape(str(r['git']))}{' (dirty)' if r['dirty'] else ''}</td>"
            f"<td>{link}</td><td>{html.escape(str(r['reason']))}</td></tr>"
        )
    return (
        "<!doctype html><meta charset='utf-8'><title>fp8lab evidence</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px}"
        ".failed,.corrupt{background:#fdd}.partial{background:#ffd}</style>"
        "<h1>fp8lab evidence runs</h1>"
        "<table><tr><th>started (UTC)</th><th>kind</th><th>status</th><th>git</th>"
        "<th>report</th><th>reason</th></tr>" + "".join(cells) + "</table>\n"
    )


def write_index(results: Path) -> Path:
    """Rewrite the index of ``results``; return the path of index.html."""
    results.mkdir(parents=True, exist_ok=True)
    with open(results / ".index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = collect_runs(results)
        write_atomic(
            results / "index.json", (json.dumps(rows, indent=2) + "\n").encode(), overwrite=True
        )
        return write_atomic(results / "index.html", _html(rows).encode(), overwrite=True)
