"""The runs section of the front page: each kind's headline run first, then every other run.

The headline run of a kind is the run its ``fp8lab evidence --check`` verdict
is about (:func:`fp8lab.evidence.staleness.judge`): its newest attempt at the
current inputs, whatever its end, else its published run, else its newest
complete run. Beside it stand that verdict and, when the newest attempt did
not complete, the last complete run at the same inputs.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from fp8lab.evidence.front_page import NONE, badge, link, table

__all__ = ["HEAD", "runs_section"]

HEAD = (
    "run",
    "status",
    "against the current code",
    "commit",
    "started (UTC)",
    "parameters",
    "reason",
)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _run_row(r: dict[str, Any]) -> tuple[str, ...]:
    dirty = " (dirty)" if r.get("dirty") else ""
    note = r.get("freshness_reason") or ""
    return (
        link(r),
        badge(r["status"]),
        badge(r["freshness"]) + (f" {_e(note)}" if note else ""),
        f"<code>{_e(r.get('git'))}</code>{dirty}",
        _e(str(r.get("started") or "")[:19].replace("T", " ")),
        _e(r.get("params_note")) or "defaults",
        _e(r.get("reason")) or NONE,
    )


def _folder(row: dict[str, Any] | None) -> str:
    """A run's folder, linked to its report (or the folder itself); a dash for none."""
    if row is None:
        return NONE
    target = row.get("report") or f"{row.get('directory')}/"
    return f"<a href='{_e(target)}'><code>{_e(row.get('directory'))}</code></a>"


def runs_section(headline: Sequence[dict[str, Any]], others: Sequence[dict[str, Any]]) -> str:
    """Each kind's headline run, its ``--check`` verdict and last complete run; the rest folded.

    Args:
        headline: one row per kind (see :func:`fp8lab.evidence.index.collect_runs`)
            with ``check``, its kind's verdict, and ``last_complete_row``, the
            row of its last complete run or None.
        others: every other run's row, newest first.
    """
    top = table(
        (*HEAD, "evidence --check", "last complete"),
        [(*_run_row(r), badge(r["check"]), _folder(r.get("last_complete_row"))) for r in headline],
        set(),
    )
    rest = (
        f"<details><summary>{len(others)} other runs, newest first</summary>"
        + table(HEAD, [_run_row(r) for r in others], set())
        + "</details>"
        if others
        else ""
    )
    return (
        "<h2 id='runs'>Runs</h2><p>Per kind, the run <code>fp8lab evidence --check</code> judges: "
        "its newest attempt at the current inputs, whatever its end, else its published run, "
        "else its newest complete run:</p>"
        + top
        + rest
        + "<p>A published set replaces the one before it in the repository: superseded runs "
        "leave <code>results/</code> when a new set is committed, and git keeps them "
        "(<code>git log --stat -- results/</code> lists every set; <code>git checkout "
        "COMMIT -- results/KIND/RUN</code> brings one back).</p>"
    )
