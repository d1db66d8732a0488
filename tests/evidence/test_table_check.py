"""A table edited after its run differs from what the executed notebook showed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from fp8lab.evidence.shown import summary_html, summary_rows, table_html
from fp8lab.evidence.sidecar import write_sidecar
from fp8lab.evidence.table_check import SIDECAR_KEY, table_problems

ROWS = [
    {"scale": 0.3, "kernel": "divide", "mismatches": 12, "split": {"b": 1, "a": 2}},
    {"scale": 2.0**-7, "kernel": "reciprocal", "mismatches": 0, "split": {"a": 0, "b": 3}},
]
SUMMARY = summary_rows({"G1": "PASS"}, {"cases": 14}, {"shapes": (16, 16), "seed": 0})


def _output(text: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "data": {"text/html": text},
        "metadata": {SIDECAR_KEY: meta} if meta else {},
    }


def make_run(tmp_path: Path, *, metadata: bool) -> Path:
    """A run folder whose notebook showed a table and the summary, as a run leaves them."""
    outputs = []
    for name, rows, shown in (
        ("t", ROWS, table_html("t", ["scale", "kernel", "mismatches", "split"], ROWS)),
        ("report_summary", SUMMARY, summary_html(SUMMARY)),
    ):
        sidecar = write_sidecar(tmp_path / "tables", name, rows)
        digest = hashlib.sha256(sidecar.read_bytes()).hexdigest()
        outputs.append(_output(shown, {"name": name, "sha256": digest} if metadata else None))
    notebook = {"cells": [{"cell_type": "code", "outputs": outputs}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook))
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.chmod(0o644)
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("metadata", [True, False], ids=["sha256", "cells"])
def test_tables_as_shown_have_no_problem(tmp_path: Path, metadata: bool) -> None:
    assert table_problems(make_run(tmp_path, metadata=metadata), "nb.ipynb") == []


@pytest.mark.parametrize("metadata", [True, False], ids=["sha256", "cells"])
@pytest.mark.parametrize(
    ("table", "old", "new"),
    [
        ("t", '"mismatches": 12', '"mismatches": 0'),
        ("t", '"kernel": "divide"', '"kernel": "reciprocal"'),
        ("report_summary", '"value": "PASS"', '"value": "FAIL"'),
    ],
)
def test_an_edited_table_differs_from_the_notebook(
    tmp_path: Path, metadata: bool, table: str, old: str, new: str
) -> None:
    run = make_run(tmp_path, metadata=metadata)
    edit(run / "tables" / f"{table}.json", old, new)
    assert table_problems(run, "nb.ipynb") == [
        f"tables/{table}.json differs from what nb.ipynb showed"
    ]


def test_with_the_sha256_even_a_digit_the_table_does_not_show_is_seen(tmp_path: Path) -> None:
    run = make_run(tmp_path, metadata=True)
    edit(run / "tables" / "t.json", (0.3).hex(), (0.30000000000000004).hex())
    assert table_problems(run, "nb.ipynb") == ["tables/t.json differs from what nb.ipynb showed"]


def test_a_table_no_output_showed_is_a_problem(tmp_path: Path) -> None:
    run = make_run(tmp_path, metadata=False)
    write_sidecar(run / "tables", "planted", [{"status": "PASS"}])
    assert table_problems(run, "nb.ipynb") == [
        "tables/planted.json differs from what nb.ipynb showed"
    ]
