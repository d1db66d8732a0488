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

__all__ = [
    "PROOFS",
    "STATUSES",
    "Freshness",
    "check_published",
    "current_inputs",
    "differs_for",
    "published_run",
    "run_freshness",
    "stale_reasons",
]

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


def published_run(
    runs: list[RunRecord], differs: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[RunRecord | None, list[RunRecord]]:
    """The newest complete run whose parameters do not differ, and every complete run, oldest first.

    Returns ``(None, complete)`` when no complete run is at the defaults.
    """
    complete = sorted(
        (r for r in runs if r.manifest["status"] == "complete"),
        key=lambda r: (r.manifest["started"], r.manifest["run_id"]),
    )
    published = [r for r in complete if not differs(r.manifest["params"])]
    return (published[-1] if published else None), complete


def stale_reasons(manifest: dict[str, Any], inputs: dict[str, str]) -> list[str]:
    """Which recorded inputs of a run differ from ``inputs`` (empty: none)."""
    return [
        _INPUTS.get(what, f"{what} changed")
        if what in manifest
        else f"{what} not recorded (older run)"
        for what, now in inputs.items()
        if manifest.get(what) != now
    ]


def run_freshness(record: RunRecord, inputs: dict[str, str]) -> tuple[str, str]:
    """``(status, reason)`` of one run against the current inputs: fresh, stale or corrupt.

    A run is fresh when every input in ``inputs`` is unchanged and its files
    still match its manifest (see :func:`current_inputs`).
    """
    if record.corrupt:
        return "corrupt", record.corrupt
    problems = file_problems(record.directory, record.manifest)
    if problems:
        return "corrupt", "; ".join(problems)
    reasons = stale_reasons(record.manifest, inputs)
    return ("stale", "; ".join(reasons)) if reasons else ("fresh", "")


def _judge(
    kind: str,
    runs: list[RunRecord],
    differs: Callable[[dict[str, Any]], dict[str, Any]],
    inputs: dict[str, str],
) -> Freshness:
    """The row of one kind, given how a run's parameters differ from the published ones."""
    run, complete = published_run(runs, differs)
    if run is None:
        if not complete:
            return Freshness(kind, "missing", "", "no complete run")
        newest = complete[-1]
        changed = _describe(differs(newest.manifest["params"]))
        return Freshness(
            kind, "non-default", newest.directory.name, f"no run at the defaults; newest: {changed}"
        )
    reasons = stale_reasons(run.manifest, inputs)
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


def differs_for(
    kind: str, notebooks: dict[str, Path]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """How a run of ``kind`` differs from its published parameters (``{}``: it does not).

    A kind that is neither a notebook nor ``proofs`` has no defaults to differ from.
    """
    if kind in notebooks:
        return _notebook_differs(notebooks[kind])
    if kind == PROOFS:
        return _proofs_differ
    return lambda params: {}


def current_inputs(
    kind: str, notebooks: dict[str, Path], pins: dict[str, str] | None = None
) -> dict[str, str]:
    """The current hashes a run of ``kind`` is judged against: package, pins, its notebook.

    Args:
        kind: the run's kind.
        notebooks: the notebooks by name.
        pins: ``code_hash`` and ``pins_hash`` if already computed.
    """
    inputs = dict(pins) if pins else {"code_hash": code_hash(), "pins_hash": pins_hash()}
    if kind in notebooks:
        inputs["notebook_sha256"] = hashlib.sha256(notebooks[kind].read_bytes()).hexdigest()
    return inputs


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
