"""The runs section of the front page: each kind's headline run first, then every other run.

The headline run of a kind is the run its ``fp8lab evidence --check`` verdict
is about (:func:`fp8lab.evidence.staleness.judge`): its newest attempt at the
current inputs, whatever its end, else its published run, else its newest
complete run. Beside it stand that verdict and, when the newest attempt did
not complete, the last complete run at the same inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from fp8lab.evidence.front_page import render

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


def runs_section(headline: Sequence[dict[str, Any]], others: Sequence[dict[str, Any]]) -> Markup:
    """Each kind's headline run, its ``--check`` verdict and last complete run; the rest folded.

    Args:
        headline: one row per kind (see :func:`fp8lab.evidence.index.collect_runs`)
            with ``check``, its kind's verdict, and ``last_complete_row``, the
            row of its last complete run or None.
        others: every other run's row, newest first.
    """
    names = list(HEAD)
    return render(
        "front_page.html.j2", "runs_section", head_names=names, headline=headline, others=others
    )
