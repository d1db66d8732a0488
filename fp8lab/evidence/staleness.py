"""What ``fp8lab evidence --check`` says of each notebook and ``fp8lab prove`` kind.

The *current inputs* of a kind are the package (every file, sources and
data), the pins (``constraints.txt``, ``pyproject.toml``) and, for a
notebook, the notebook. Its *published parameters* are, for a notebook, the
defaults its parameters cell declares now with ``smoke`` false; for a proofs
kind, all 2**32 patterns (a ``--stop`` run is filed as ``partial`` and never
counts).

An *attempt* is a run at the published parameters and the current inputs,
whatever its end (an orphaned run records no inputs, so it is none). When the
newest attempt did not complete (an error, a timeout, SIGINT or SIGTERM), the
kind is ``failed``, whatever older runs say; an older
complete attempt is named beside it as its last complete run. Otherwise the
kind's run is its newest attempt, else its published run (the newest
``complete`` run at the published parameters), which is fresh when its
inputs are the current ones and its files still match the sha256 in its
manifest (and a notebook run's tables what its executed notebook showed).

Beside the kinds, ``--check`` names each disagreement of the attempts log
with the run folders (:mod:`fp8lab.evidence.attempts`) as ``corrupt``, and
each staging folder left by a killed runner as ``interrupted`` (``running``
while its runner lives); any of them fails the check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fp8lab.evidence.attempts import ATTEMPTS_LOG, log_problems
from fp8lab.evidence.declared import declared_files, run_file_problems
from fp8lab.evidence.manifest import RunRecord, file_problems, scan_runs
from fp8lab.evidence.provenance import code_hash, pins_hash
from fp8lab.evidence.published_params import (
    PROOF_KINDS,
    PROOFS,
    PROOFS_MX,
    differs_for,
    notebook_differs,
    proof_kinds,
    proofs_differ,
)
from fp8lab.evidence.staging import leftovers
from fp8lab.evidence.table_check import table_problems

__all__ = [
    "PROOFS",
    "PROOFS_MX",
    "PROOF_KINDS",
    "STATUSES",
    "Freshness",
    "Verdict",
    "attempts",
    "check_published",
    "current_inputs",
    "differs_for",
    "judge",
    "published_run",
    "required_files",
    "run_freshness",
    "stale_reasons",
]

STATUSES = (
    "fresh",
    "failed",
    "stale",
    "missing",
    "non-default",
    "corrupt",
    "interrupted",
    "running",
)
_INPUTS = {  # manifest field -> what a change of it means
    "code_hash": "package changed",
    "pins_hash": "pins changed",
    "notebook_sha256": "notebook changed",
}


@dataclass(frozen=True)
class Freshness:
    """One line of ``--check``: a kind's verdict, or one corrupt run.

    ``notebook`` is the kind (a notebook's name, or a proofs kind); ``status``
    is one of :data:`STATUSES`; ``run`` and ``last_complete`` are run folders
    relative to the results root (``""``: none).
    """

    notebook: str
    status: str
    run: str
    reason: str
    last_complete: str = ""


@dataclass(frozen=True)
class Verdict:
    """What ``--check`` and the front page say of one kind.

    ``run`` is the run the status is about (None when ``missing``);
    ``last_complete`` the newest complete attempt older than a newest attempt
    that did not complete (None otherwise).
    """

    kind: str
    status: str
    run: RunRecord | None
    reason: str
    last_complete: RunRecord | None = None

    def line(self) -> Freshness:
        """This verdict as a line of ``--check``."""
        return Freshness(
            self.kind,
            self.status,
            self.run.relative if self.run else "",
            self.reason,
            self.last_complete.relative if self.last_complete else "",
        )


def _describe(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _order(record: RunRecord) -> tuple[str, str]:
    return record.manifest["started"], record.manifest["run_id"]


def published_run(
    runs: list[RunRecord], differs: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[RunRecord | None, list[RunRecord]]:
    """The newest complete run whose parameters do not differ, and every complete run, oldest first.

    Returns ``(None, complete)`` when no complete run is at the defaults.
    """
    complete = sorted((r for r in runs if r.manifest["status"] == "complete"), key=_order)
    published = [r for r in complete if not differs(r.manifest["params"])]
    return (published[-1] if published else None), complete


def attempts(
    runs: list[RunRecord],
    differs: Callable[[dict[str, Any]], dict[str, Any]],
    inputs: dict[str, str],
) -> list[RunRecord]:
    """The runs at the published parameters and the current ``inputs``, oldest first.

    Complete or failed alike; a ``partial`` run is never an attempt.
    """
    at_defaults = (r for r in runs if not differs(r.manifest["params"]))
    tried = (r for r in at_defaults if r.manifest["status"] != "partial")
    return sorted((r for r in tried if not stale_reasons(r.manifest, inputs)), key=_order)


def stale_reasons(manifest: dict[str, Any], inputs: dict[str, str]) -> list[str]:
    """Which recorded inputs of a run differ from ``inputs`` (empty: none)."""
    return [
        _INPUTS.get(what, f"{what} changed")
        if what in manifest
        else f"{what} not recorded (older run)"
        for what, now in inputs.items()
        if manifest.get(what) != now
    ]


def required_files(kind: str, notebooks: dict[str, Path]) -> frozenset[str]:
    """The files a complete run of ``kind`` must hold, as its notebook declares them."""
    return declared_files(notebooks[kind]) if kind in notebooks else frozenset()


def _problems(run: RunRecord, required: frozenset[str]) -> list[str]:
    """Listed files gone or changed; in a complete run, files unlisted or tables re-written.

    A complete run must list every declared and present file, and a notebook
    run's tables must be what its executed notebook showed.
    """
    problems = file_problems(run.directory, run.manifest)
    if run.manifest["status"] == "complete":
        problems += run_file_problems(run.directory, run.manifest["files"], required)
        notebook = run.manifest.get("notebook")
        if isinstance(notebook, str) and notebook in run.manifest["files"]:
            problems += table_problems(run.directory, notebook)
    return problems


def run_freshness(
    record: RunRecord, inputs: dict[str, str], required: frozenset[str] = frozenset()
) -> tuple[str, str]:
    """``(status, reason)`` of one run against the current inputs: fresh, stale or corrupt.

    A run is fresh when every input in ``inputs`` is unchanged, its files
    still match its manifest (see :func:`current_inputs`), and a complete run
    holds every file its notebook declares (``required``) and none unlisted.
    """
    if record.corrupt:
        return "corrupt", record.corrupt
    problems = _problems(record, required)
    if problems:
        return "corrupt", "; ".join(problems)
    reasons = stale_reasons(record.manifest, inputs)
    return ("stale", "; ".join(reasons)) if reasons else ("fresh", "")


def judge(
    kind: str,
    runs: list[RunRecord],
    differs: Callable[[dict[str, Any]], dict[str, Any]],
    inputs: dict[str, str],
    required: frozenset[str] = frozenset(),
) -> Verdict:
    """The verdict on one kind: its newest attempt's end, else its published run's freshness.

    Args:
        kind: the kind judged.
        runs: its readable runs, any status.
        differs: how a run's parameters differ from the published ones.
        inputs: the current inputs (see :func:`current_inputs`).
        required: the files a complete run must hold (:func:`required_files`).
    """
    tried = attempts(runs, differs, inputs)
    if tried and tried[-1].manifest["status"] != "complete":
        newest = tried[-1]
        done = [r for r in tried if r.manifest["status"] == "complete"]
        last = done[-1] if done else None
        reason = newest.manifest["reason"] or "did not complete"
        reason += f"; last complete: {last.relative}" if last else ""
        return Verdict(kind, newest.manifest["status"], newest, reason, last)
    run, complete = published_run(runs, differs)
    run = tried[-1] if tried else run
    if run is None:
        if not complete:
            return Verdict(kind, "missing", None, "no complete run")
        newest = complete[-1]
        changed = _describe(differs(newest.manifest["params"]))
        return Verdict(kind, "non-default", newest, f"no run at the defaults; newest: {changed}")
    problems = _problems(run, required)
    if problems:
        return Verdict(kind, "corrupt", run, "; ".join(problems))
    reasons = stale_reasons(run.manifest, inputs)
    notes = [
        f"newer run {r.relative} not counted: "
        + (_describe(differs(r.manifest["params"])) or "; ".join(stale_reasons(r.manifest, inputs)))
        for r in complete
        if _order(r) > _order(run)
    ]
    return Verdict(kind, "stale" if reasons else "fresh", run, "; ".join(reasons + notes))


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
    results: Path, notebooks: dict[str, Path], *, proofs: bool | Sequence[str] = True
) -> list[Freshness]:
    """One line per notebook and proofs kind, then one per corrupt run anywhere.

    Args:
        results: the results root.
        notebooks: the notebooks to check, by name.
        proofs: the proofs kinds to check; True: ``proofs``, and ``proofs-mx``
            once a run of it over all 2**32 patterns was filed; False: none.
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
        verdict = judge(
            name, by_kind.get(name, []), notebook_differs(path), inputs, declared_files(path)
        )
        rows.append(verdict.line())
    for kind in proof_kinds(proofs, by_kind):
        rows.append(judge(kind, by_kind.get(kind, []), proofs_differ, pins).line())
    rows += [
        Freshness(r.directory.parent.name, "corrupt", r.relative, r.corrupt)
        for r in records
        if r.corrupt
    ]
    rows += [
        Freshness(ATTEMPTS_LOG, "corrupt", folder, why) for folder, why in log_problems(results)
    ]
    rows += [Freshness(kind, status, f, why) for kind, f, status, why in leftovers(results)]
    return rows
