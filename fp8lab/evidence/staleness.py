"""Whether the published run of each notebook, and of ``fp8lab prove``, is fresh.

The published run of a kind is its newest ``complete`` run made at the
defaults: a notebook's run at the defaults its parameters cell declares now,
with ``smoke`` false; a proofs run over all 2**32 patterns (a ``--stop`` run
is filed as ``partial`` and never counts). It is fresh when every input it
was made from is unchanged: the package (every file, sources and data), the
pins (``constraints.txt``, ``pyproject.toml``) and, for a notebook, the
notebook; and when its files still match the sha256 in its manifest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fp8lab.evidence.manifest import RunRecord, file_problems, scan_runs
from fp8lab.evidence.parameters import ParameterError, declared_parameters, non_default
from fp8lab.evidence.provenance import code_hash, pins_hash
from fp8lab.exhaustive import ALL_PATTERNS

__all__ = ["PROOFS", "STATUSES", "Freshness", "check_published"]

PROOFS = "proofs"
STATUSES = ("fresh", "stale", "missing", "non-default", "corrupt")
_INPUTS = {  # manifest field -> what a change of it means
    "code_hash": "package changed",
    "pins_hash": "pins changed",
    "notebook_sha256": "notebook changed",
}


@dataclass(frozen=True)
class Freshness:
    """One line of ``--check``: a kind's published run, or one corrupt run.

    ``notebook`` is the kind (a notebook's name, or ``proofs``); ``status`` is
    one of :data:`STATUSES`.
    """

    notebook: str
    status: str
    run: str
    reason: str


def _describe(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _judge(
    kind: str,
    runs: list[RunRecord],
    differs: Callable[[dict[str, Any]], dict[str, Any]],
    inputs: dict[str, str],
) -> Freshness:
    """The row of one kind, given how a run's parameters differ from the published ones."""
    complete = sorted(
        (r for r in runs if r.manifest["status"] == "complete"),
        key=lambda r: (r.manifest["started"], r.manifest["run_id"]),
    )
    published = [r for r in complete if not differs(r.manifest["params"])]
    if not published:
        if not complete:
            return Freshness(kind, "missing", "", "no complete run")
        newest = complete[-1]
        changed = _describe(differs(newest.manifest["params"]))
        return Freshness(
            kind, "non-default", newest.directory.name, f"no run at the defaults; newest: {changed}"
        )
    run = published[-1]
    reasons = [
        _INPUTS[what] if what in run.manifest else f"{what} not recorded (older run)"
        for what, now in inputs.items()
        if run.manifest.get(what) != now
    ]
    problems = file_problems(run.directory, run.manifest)
    if problems:
        return Freshness(kind, "corrupt", run.directory.name, "; ".join(problems))
    newer = [r for r in complete if r.manifest["started"] > run.manifest["started"]]
    notes = [
        f"newer run {r.directory.name} not counted: {_describe(differs(r.manifest['params']))}"
        for r in newer
    ]
    return Freshness(
        kind, "stale" if reasons else "fresh", run.directory.name, "; ".join(reasons + notes)
    )


def _notebook_differs(path: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    try:
        defaults = {n: d.default for n, d in declared_parameters(path).items()}
    except ParameterError:
        defaults = {}

    def differs(params: dict[str, Any]) -> dict[str, Any]:
        changed = non_default(params, defaults)
        if params.get("smoke"):
            changed["smoke"] = params["smoke"]
        return changed

    return differs


def _proofs_differ(params: dict[str, Any]) -> dict[str, Any]:
    return {} if params.get("stop") == ALL_PATTERNS else {"stop": params.get("stop")}


def check_published(
    results: Path, notebooks: dict[str, Path], *, proofs: bool = True
) -> list[Freshness]:
    """One row per notebook (and for ``proofs``), then one per corrupt run anywhere.

    Args:
        results: the results root.
        notebooks: the notebooks to check, by name.
        proofs: also check the ``fp8lab prove`` run.
    """
    records = list(scan_runs(results))
    by_kind: dict[str, list[RunRecord]] = {}
    for record in records:
        if not record.corrupt:
            by_kind.setdefault(record.manifest["kind"], []).append(record)
    pins = {"code_hash": code_hash(), "pins_hash": pins_hash()}
    rows = []
    for name, path in notebooks.items():
        inputs = {**pins, "notebook_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        rows.append(_judge(name, by_kind.get(name, []), _notebook_differs(path), inputs))
    if proofs:
        rows.append(_judge(PROOFS, by_kind.get(PROOFS, []), _proofs_differ, pins))
    rows += [
        Freshness(r.directory.parent.name, "corrupt", r.directory.name, r.corrupt)
        for r in records
        if r.corrupt
    ]
    return rows
