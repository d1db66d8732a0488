"""The headline records of one run, read back from the files it wrote.

A run records its gates and proofs as JSON: ``fp8lab prove`` writes
``gates.json`` and ``exhaustive/*.json``; a notebook writes ``tables/*.json``
sidecars (floats as ``float.hex``). A record is recognised by its fields, not
by its file name: a gate record has the fields of ``GateResult`` (docs/records.md),
a proof record those of ``ExhaustiveRecord``. Mutation and
detector headlines come from the tables the ``mutation``, ``gate_g1``,
``divide_vs_reciprocal`` and ``tie_sweep`` notebooks file. A file that cannot
be read is skipped here; the run's own status says whether it is complete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fp8lab.evidence.sidecar import from_hex_floats

__all__ = [
    "GATE_FIELDS",
    "PROOF_FIELDS",
    "EXPECTED_TABLE",
    "detector_counts",
    "expected_fail",
    "gate_records",
    "merge_same",
    "mutation_summary",
    "number",
    "proof_records",
]

GATE_FIELDS = frozenset({"gate", "kernel", "status", "cases", "assertions", "words", "reason"})
PROOF_FIELDS = frozenset({"a", "b", "format", "examined", "mismatches", "nan_code_mismatches"})
# A notebook's expected verdicts, e.g. gemm_pipeline's negative control: rows of
# expected_status and why, plus the fields that name the record (a gate: gate, kernel;
# a proof: a, b, format). They annotate a record; they never change it.
EXPECTED_TABLE = "expected_verdicts"
_NOTE_FIELDS = frozenset({"expected_status", "why"})


def number(value: Any) -> float | int | None:
    """A count or measurement as written by a run: a number, or a ``float.hex`` string."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return from_hex_floats(value)
        except ValueError:
            return None
    return None


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects in ``path``: the object itself, or a list's objects."""
    data = _load(path)
    items = data if isinstance(data, list) else [data]
    return [item for item in items if isinstance(item, dict)]


def _files(directory: Path, *patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in directory.glob(pattern) if p.is_file())


def _expected_notes(directory: Path) -> list[dict[str, Any]]:
    """The run's expected verdicts that name a record by at least one field."""
    return [
        r
        for r in _table(directory, EXPECTED_TABLE)
        if "expected_status" in r and r.keys() - _NOTE_FIELDS
    ]


def _annotated(record: dict[str, Any], notes: list[dict[str, Any]]) -> dict[str, Any]:
    """``record`` with ``expected_status`` and ``expected_why`` from the first note naming it.

    A note names a record when each of its naming fields is in the record, equal
    as text.
    """
    for note in notes:
        names = note.keys() - _NOTE_FIELDS
        if all(k in record and str(record[k]) == str(note[k]) for k in names):
            return {
                **record,
                "expected_status": note["expected_status"],
                "expected_why": note.get("why") or "",
            }
    return record


def _records(directory: Path, fields: frozenset[str], *patterns: str) -> list[dict[str, Any]]:
    """Every row with ``fields`` in the files ``patterns`` match, annotated, with ``file``."""
    notes = _expected_notes(directory)
    return [
        _annotated({**row, "file": path.relative_to(directory).as_posix()}, notes)
        for path in _files(directory, *patterns)
        for row in _rows(path)
        if row.keys() >= fields
    ]


def gate_records(directory: Path) -> list[dict[str, Any]]:
    """Every gate record a run wrote, each with ``file``: where it came from.

    Looks at ``gates.json`` and ``tables/*.json``; order: by file, then as written.
    A record the run's ``tables/expected_verdicts.json`` names (same gate and
    kernel) gains ``expected_status`` and ``expected_why``; its ``status`` stays
    what the gate recorded.
    """
    return _records(directory, GATE_FIELDS, "gates.json", "tables/*.json")


def expected_fail(record: dict[str, Any]) -> bool:
    """Whether ``record`` (a gate or a proof) is a FAIL its run declared expected."""
    return record.get("status") == "FAIL" and record.get("expected_status") == "FAIL"


def proof_records(directory: Path) -> list[dict[str, Any]]:
    """Every exhaustive proof record a run wrote (``exhaustive/*.json``, ``tables/*.json``).

    Annotated as :func:`gate_records` annotates gates, by a note naming the
    proof's ``a``, ``b`` and ``format``.
    """
    return _records(directory, PROOF_FIELDS, "exhaustive/*.json", "tables/*.json")


def merge_same(records: list[dict[str, Any]], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per distinct value of ``fields``, first seen first, every ``run`` in ``runs``.

    Two runs that recorded the same verdict with the same counts are shown
    once; any difference in ``fields`` keeps both rows.
    """
    merged: dict[tuple[str, ...], dict[str, Any]] = {}
    for record in records:
        key = tuple(json.dumps(record.get(f), sort_keys=True) for f in fields)
        if key in merged:
            merged[key]["runs"].append(record["run"])
        else:
            merged[key] = {**record, "runs": [record["run"]]}
    return list(merged.values())


def _table(directory: Path, name: str) -> list[dict[str, Any]]:
    return _rows(directory / "tables" / f"{name}.json")


def mutation_summary(directory: Path) -> dict[str, Any] | None:
    """Score, minimum kill margin, thin mutants and survivors of a ``mutation`` run.

    The kill margin of a killed mutant is its failed assertions
    (docs/mutation.md). Returns None when the run filed no catalogue table.
    """
    catalogue = _table(directory, "catalogue")
    if not catalogue:
        return None
    killed = [r for r in catalogue if r.get("verdict") == "KILLED"]
    margins = [
        r["failed_assertions"] for r in killed if isinstance(r.get("failed_assertions"), int)
    ]
    source = _table(directory, "source_summary")
    head = source[0] if source else {}
    return {
        "catalogue": len(catalogue),
        "catalogue_killed": len(killed),
        "min_margin": min(margins) if margins else None,
        "thin": [r.get("id") for r in catalogue if r.get("thin")],
        "score": number(head.get("score")),
        "source_mutants": head.get("mutants"),
        "source_killed": head.get("killed"),
        "justified": head.get("justified_equivalent"),
        "survivors": [
            {
                "id": r.get("id"),
                "description": r.get("description"),
                "reason": r.get("reason") or r.get("justification"),
            }
            for r in _table(directory, "survivors")
        ],
    }


def detector_counts(directory: Path) -> list[dict[str, Any]]:
    """The detector headline rows of a run: one per scale, with its counts.

    ``divide_vs_reciprocal``: the exposing set's size per scale
    (``table_scales``) and whether enumeration equalled brute force over all
    2**32 inputs (``enumeration_vs_brute``). ``gate_g1``: the seed's 209 words,
    exposed per scale beside the published count (``detector``). ``tie_sweep``:
    the scales where no input is exposed (``summary``).
    """
    rows = []
    for r in _table(directory, "table_scales"):
        rows.append(
            {
                "what": "exposing inputs (complete set)",
                "scale": r.get("scale"),
                "count": r.get("count"),
                "examined": r.get("stop", 0) - r.get("start", 0),
            }
        )
    brute = _table(directory, "enumeration_vs_brute")
    if brute:
        equal = sum(1 for r in brute if r.get("equal") is True)
        rows.append(
            {
                "what": "enumeration equals brute force over 2^32 inputs",
                "scale": None,
                "count": equal,
                "of": len(brute),
            }
        )
    for r in _table(directory, "detector"):
        rows.append(
            {
                "what": "seed's words exposed (float32 input)",
                "scale": r.get("scale"),
                "count": r.get("exposed_float32"),
                "published": r.get("published"),
                "of": r.get("words"),
            }
        )
    for r in _table(directory, "summary"):
        if "zero_scales" in r:
            rows.append(
                {
                    "what": "scales where no input is exposed",
                    "scale": None,
                    "count": r.get("zero_scales"),
                    "of": r.get("scales"),
                }
            )
    return rows
