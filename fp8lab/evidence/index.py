"""``results/index.json`` and ``results/index.html``: every run, and the front page.

The index is a view derived from the manifests and the records each run
wrote, so it is rewritten (under a lock, atomically) after every run; the
runs themselves are never touched. ``index.json`` lists every run, newest
first, with whether it is fresh against the current code; the *headline* run
of each kind also carries its kind's ``fp8lab evidence --check`` verdict
(``check``, ``check_reason``) and its ``last_complete`` run. ``index.html`` is
the front page (:mod:`fp8lab.evidence.front_page`): the gates, proofs,
mutation and detector headlines of each kind's headline run (the run its
verdict is about, :func:`fp8lab.evidence.staleness.judge`: its newest attempt
at the current inputs, whatever its end, else its published run, else its
newest complete run), then the runs.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import tomllib
from pathlib import Path
from typing import Any

from fp8lab.evidence import front_page as fp
from fp8lab.evidence.front_runs import runs_section
from fp8lab.evidence.headline import (
    detector_counts,
    expected_fail,
    gate_records,
    merge_same,
    mutation_summary,
    proof_records,
)
from fp8lab.evidence.manifest import RunRecord, scan_runs
from fp8lab.evidence.staleness import (
    STATUSES,
    Verdict,
    current_inputs,
    differs_for,
    judge,
    required_files,
    run_freshness,
)
from fp8lab.runtime.atomic import write_atomic
from fp8lab.runtime.locations import notebooks_dir

# The module, not the function of the same name that fp8lab.evidence exports.
provenance = importlib.import_module("fp8lab.evidence.provenance")

GATE_KEY = ("gate", "kernel", "status", "cases", "assertions", "words", "reason", "expected_status")
PROOF_KEY = (
    "a",
    "b",
    "format",
    "saturate",
    "nan",
    "start",
    "stop",
    "status",
    "examined",
    "mismatches",
    "nan_code_mismatches",
    "nan_code_unexplained",
)

__all__ = [
    "GATE_KEY",
    "PROOF_KEY",
    "collect_runs",
    "front_page",
    "headline_runs",
    "headline_verdicts",
    "repo_notebooks",
    "write_index",
]


def repo_notebooks() -> dict[str, Path]:
    """The repository's notebooks by name (``notebooks/*.ipynb``)."""
    return {p.stem: p for p in sorted((notebooks_dir()).glob("*.ipynb"))}


def _row(record: RunRecord, notebooks: dict[str, Path], pins: dict[str, str]) -> dict[str, Any]:
    data = record.manifest
    git: dict[str, Any] = data["git"] if isinstance(data.get("git"), dict) else {}
    kind = data.get("kind", record.directory.parent.name)
    inputs = current_inputs(kind, notebooks, pins)
    freshness, why = run_freshness(record, inputs, required_files(kind, notebooks))
    changed = {} if record.corrupt else differs_for(kind, notebooks)(data["params"])
    report = record.directory / "report.html"
    return {
        "kind": kind,
        "run_id": data.get("run_id", record.directory.name),
        "status": "corrupt" if record.corrupt else data["status"],
        "reason": record.corrupt or data["reason"],
        "started": data.get("started"),
        "finished": data.get("finished"),
        "git": git.get("short"),
        "dirty": git.get("dirty"),
        "directory": record.relative,
        "report": f"{record.relative}/report.html" if report.exists() else None,
        "freshness": freshness,
        "freshness_reason": why,
        "params_note": ", ".join(f"{k}={v!r}" for k, v in changed.items()),
    }


def _pins() -> dict[str, str]:
    return {"code_hash": provenance.code_hash(), "pins_hash": provenance.pins_hash()}


def collect_runs(results: Path, notebooks: dict[str, Path] | None = None) -> list[dict[str, Any]]:
    """One row per run directory with a manifest, newest first.

    A run whose manifest cannot be read gets the status ``corrupt`` and the
    reason why; it sorts last and never stops the other runs from being listed.
    Each row says whether the run is ``fresh``, ``stale`` or ``corrupt``
    against the current code (``freshness``, ``freshness_reason``).
    """
    notebooks = repo_notebooks() if notebooks is None else notebooks
    pins = _pins()
    rows = [_row(record, notebooks, pins) for record in scan_runs(results)]
    return sorted(rows, key=lambda r: (str(r["started"] or ""), str(r["run_id"])), reverse=True)


def headline_verdicts(results: Path, notebooks: dict[str, Path]) -> dict[str, Verdict]:
    """Per kind with a run to show, its ``--check`` verdict (see :func:`judge`); by kind name."""
    by_kind: dict[str, list[RunRecord]] = {}
    for record in scan_runs(results):
        if not record.corrupt:
            by_kind.setdefault(record.manifest["kind"], []).append(record)
    pins = _pins()
    verdicts = {}
    for kind, runs in sorted(by_kind.items()):
        inputs = current_inputs(kind, notebooks, pins)
        required = required_files(kind, notebooks)
        verdict = judge(kind, runs, differs_for(kind, notebooks), inputs, required)
        if verdict.run is not None:
            verdicts[kind] = verdict
    return verdicts


def headline_runs(results: Path, notebooks: dict[str, Path]) -> dict[str, RunRecord]:
    """Per kind, the run its ``--check`` verdict is about; by kind name."""
    verdicts = headline_verdicts(results, notebooks).values()
    return {v.kind: v.run for v in verdicts if v.run is not None}


def _summary_of_runs(verdicts: list[Verdict]) -> str:
    """How many headline runs are fresh, and the kinds that are not, by status."""
    fresh = sum(1 for v in verdicts if v.status == "fresh")
    others = [
        f"{status}: {', '.join(v.kind for v in verdicts if v.status == status)}"
        for status in STATUSES
        if status != "fresh" and any(v.status == status for v in verdicts)
    ]
    detail = f" ({'; '.join(others)})" if others else ""
    return f"Headline runs fresh against the current code: {fresh} of {len(verdicts)}{detail}."


def _justify(mutation: dict[str, Any], fresh: bool) -> dict[str, Any]:
    """Fill survivors' missing justifications from ``mutants/equivalent.toml``, saying so."""
    if all(s["reason"] for s in mutation["survivors"]):
        return mutation
    path = provenance.PACKAGE_ROOT / "mutants" / "equivalent.toml"
    try:
        entries = tomllib.loads(path.read_text()).get("equivalent", [])
    except (OSError, ValueError):
        entries = []
    reasons = {e.get("key"): e.get("reason") for e in entries if isinstance(e, dict)}
    survivors = [
        {**s, "reason": s["reason"] or reasons.get(s["id"])} for s in mutation["survivors"]
    ]
    where = (
        "the run is fresh, so this is the file it ran with"
        if fresh
        else "the current file: this run is stale, its own may differ"
    )
    return {
        **mutation,
        "survivors": survivors,
        "reason_source": f" (from fp8lab/mutants/equivalent.toml; {where})",
    }


def front_page(
    results: Path, notebooks: dict[str, Path] | None = None
) -> tuple[list[dict[str, Any]], str]:
    """The index rows and the front page's HTML for ``results``."""
    notebooks = repo_notebooks() if notebooks is None else notebooks
    rows = collect_runs(results, notebooks)
    by_dir = {r["directory"]: r for r in rows}
    for row in rows:
        row.update(check=None, check_reason=None, last_complete=None)
    # A run filed by another process between the two scans is left to that process's own
    # rewrite of the index (it takes the lock after filing), so the page shows one scan.
    shown = [
        (v, v.run)
        for v in headline_verdicts(results, notebooks).values()
        if v.run is not None and v.run.relative in by_dir
    ]
    chosen = {v.kind: by_dir[record.relative] for v, record in shown}
    for v, _ in shown:
        last = v.last_complete.relative if v.last_complete else None
        chosen[v.kind].update(check=v.status, check_reason=v.reason, last_complete=last)
    headline = [
        {**row, "last_complete_row": by_dir.get(row["last_complete"] or "")}
        for row in chosen.values()
    ]
    gates, proofs, detectors = [], [], []
    mutation = None
    for v, record in shown:
        row = chosen[v.kind]
        gates += [{**g, "run": row} for g in gate_records(record.directory)]
        proofs += [{**p, "run": row} for p in proof_records(record.directory)]
        detectors += [{**d, "run": row} for d in detector_counts(record.directory)]
        summary = mutation_summary(record.directory)
        if summary is not None and mutation is None:
            threshold = record.manifest["params"].get("threshold")
            mutation = {
                **_justify(summary, row["freshness"] == "fresh"),
                "run": row,
                "threshold": threshold,
            }
    gates.sort(key=lambda g: (str(g["gate"]), str(g["kernel"]), g["run"]["kind"] != "proofs"))
    proofs.sort(key=lambda p: p["run"]["kind"] != "proofs")  # stable: as each run wrote them
    gates = merge_same(gates, GATE_KEY)
    proofs = merge_same(proofs, PROOF_KEY)
    others = [r for r in rows if r["check"] is None]  # not a kind's headline run
    statuses = [str(g["status"]) for g in gates]
    expected = sum(1 for g in gates if expected_fail(g))
    fails = f"{statuses.count('FAIL')} FAIL" + (f" ({expected} expected)" if expected else "")
    proofs_expected = sum(1 for p in proofs if expected_fail(p))
    summary_line = (
        f"Gates: {statuses.count('PASS')} PASS, {fails}, "
        f"{statuses.count('PENDING')} PENDING. Proofs: "
        f"{sum(1 for p in proofs if p.get('status') == 'PASS')} of {len(proofs)} PASS"
        + (f" ({proofs_expected} of the FAILs expected). " if proofs_expected else ". ")
        + _summary_of_runs([v for v, _ in shown])
    )
    html = fp.page(
        summary_line,
        [
            fp.gates_section(gates),
            fp.proofs_section(proofs),
            fp.mutation_section(mutation),
            fp.detectors_section(detectors),
            runs_section(headline, others),
        ],
    )
    return rows, html


def write_index(results: Path, notebooks: dict[str, Path] | None = None) -> Path:
    """Rewrite the index of ``results``; return the path of index.html."""
    results.mkdir(parents=True, exist_ok=True)
    with open(results / ".index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows, html = front_page(results, notebooks)
        write_atomic(
            results / "index.json", (json.dumps(rows, indent=2) + "\n").encode(), overwrite=True
        )
        return write_atomic(results / "index.html", html.encode(), overwrite=True)
