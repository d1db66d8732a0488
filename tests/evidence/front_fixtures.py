"""A small results tree for the front-page tests, and an independent reader of the page.

Runs are filed with ``EvidenceRun`` directly (no papermill, no gates run), so
building the tree takes milliseconds. :func:`page_problems` reads the page's
visible text and compares it with the records on disk and with freshness
computed here from the manifests' hashes; it shares no code with the renderer
beyond the package hash itself.
"""

from __future__ import annotations

import importlib
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from fp8lab.evidence import EvidenceRun
from fp8lab.evidence.report import render_report
from fp8lab.evidence.shown import SUMMARY_TAG, summary_html, summary_rows, table_html

provenance = importlib.import_module("fp8lab.evidence.provenance")

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
    '<rect width="120" height="40" fill="#36c"/></svg>'
)


def gate(
    name: str, kernel: str, status: str, cases: int, assertions: int, words: int, reason: str = ""
) -> dict[str, Any]:
    """A gate record with the fields of ``GateResult`` the page reads."""
    return {
        "gate": name,
        "kernel": kernel,
        "status": status,
        "cases": cases,
        "assertions": assertions,
        "assertions_failed": 0,
        "words": words,
        "reason": reason,
        "scope": "",
        "case_results": [],
    }


LONG_ENCODER = "a_package.with_a_long_module_path.kernels.sources.interpreter:hardware_e5m2"


def proof(a: str, b: str, fmt: str, mismatches: int = 0, nan_codes: int = 0) -> dict[str, Any]:
    """An exhaustive record with the fields of ``ExhaustiveRecord`` the page reads."""
    return {
        "a": a,
        "b": b,
        "format": fmt,
        "saturate": True,
        "nan": "canonical",
        "start": 0,
        "stop": 1 << 32,
        "examined": 1 << 32,
        "mismatches": mismatches,
        "nan_code_mismatches": nan_codes,
        "nan_code_unexplained": nan_codes,
        "nan_code_exempt_side": None,
        "nan_code_exempt_policy": None,
        "status": "FAIL" if mismatches or nan_codes else "PASS",
        "wall_seconds": 4.75,
    }


def executed_notebook(path: Path) -> Path:
    """A notebook as papermill leaves it: outputs with an SVG figure and a table."""
    params = new_code_cell("seed: int = 0\nsmoke: bool = False\nrun_dir: str = ''")
    params.metadata["tags"] = ["parameters"]
    figure = new_code_cell("out.figure(fig, 'f')", execution_count=2)
    figure.outputs = [new_output("display_data", {"image/svg+xml": SVG, "text/plain": "fig"})]
    table = new_code_cell("out.table('t', rows)", execution_count=3)
    table.outputs = [
        new_output(
            "display_data",
            {"text/markdown": "| a | b |\n|---|---|\n| 1 | 2 |", "text/plain": "table"},
        )
    ]
    rows = [{"scale": 2.0**-k, "count": 1000 * k} for k in range(40)]
    long = new_code_cell("out.table('long', rows)", execution_count=4)
    long.outputs = [_html(table_html("long", ["scale", "count"], rows))]
    summary = new_code_cell("out.summary(...)", execution_count=5)
    summary.metadata["tags"] = [SUMMARY_TAG]
    verdicts, numbers = {"G1 kernel": "PASS"}, {"words": 69_168}
    summary.outputs = [_html(summary_html(summary_rows(verdicts, numbers, {"seed": 0})))]
    cells = [new_markdown_cell("# A notebook"), params, figure, table, long, summary]
    nb = new_notebook(cells=cells)
    nb.metadata["papermill"] = {"parameters": {"seed": 0, "smoke": False, "run_dir": "/x"}}
    nbformat.write(nb, path)
    return path


def _html(text: str) -> Any:
    return new_output("display_data", {"text/html": text, "text/plain": "html"})


def file_run(
    results: Path,
    kind: str,
    params: dict[str, Any],
    files: dict[str, Any],
    *,
    report: bool = False,
    stale: bool = False,
) -> Path:
    """File a complete run of ``kind`` with ``files`` (name -> JSON); optionally make it stale.

    A stale run records a package hash that is not the current one, as a run
    made before a code change does.
    """
    with EvidenceRun(results, kind, params) as run:
        for name, obj in files.items():
            run.write_json(name, obj)
        if report:
            executed = executed_notebook(run.staging / f"{kind}.ipynb")
            (run.staging / "report.html").write_bytes(render_report(executed))
    assert run.final is not None
    if stale:
        manifest = run.final / "manifest.json"
        data = json.loads(manifest.read_text())
        data["code_hash"] = "0" * 64
        manifest.write_text(json.dumps(data, indent=2))
    return run.final


def build_results(results: Path) -> dict[str, Path]:
    """A proofs run (G1 PASS, G2 PENDING, one proof), a mutation run, and an older stale run."""
    old = file_run(
        results,
        "gate_g1",
        {"seed": 0},
        {
            "tables/g1.json": [gate("G1", "k_old", "FAIL", 4, 8, 40, "old mismatch")],
        },
        stale=True,
    )
    proofs = file_run(
        results,
        "proofs",
        {"stop": 1 << 32},
        {
            "gates.json": [
                gate("G1", "vllm_cpp", "PASS", 16, 96, 69168),
                gate("G2", "upstream", "PENDING", 0, 0, 0, "owed: no CUDA device"),
            ],
            "exhaustive/fast-vs-scan-e4m3fn.json": proof("fast", "scan", "e4m3fn"),
            # a negative control with a name no line break fits (a MODULE:FUNC encoder)
            "exhaustive/control.json": proof(LONG_ENCODER, "scan", "e5m2", nan_codes=7),
            "tables/expected_verdicts.json": [
                {
                    "a": LONG_ENCODER,
                    "b": "scan",
                    "format": "e5m2",
                    "expected_status": "FAIL",
                    "why": "a planted NaN code",
                },
            ],
        },
    )
    mutation = file_run(
        results,
        "mutation",
        {"threshold": 3},
        {
            "tables/catalogue.json": [
                {"id": "M1", "verdict": "KILLED", "failed_assertions": 56, "thin": False},
                {"id": "M2", "verdict": "KILLED", "failed_assertions": 2, "thin": True},
            ],
            "tables/source_summary.json": [
                {"mutants": 10, "killed": 8, "justified_equivalent": 2, "score": (1.0).hex()}
            ],
            "tables/survivors.json": [
                {"id": "mod:op:1", "description": "1 -> 2", "reason": "block size only"},
                {"id": "mod:op:2", "description": "0 -> 1", "reason": "same bytes"},
            ],
            "tables/detector.json": [
                {"scale": (0.0092).hex(), "exposed_float32": 24, "published": 24, "words": 209},
            ],
        },
        report=True,
    )
    return {"old": old, "proofs": proofs, "mutation": mutation}


class _Page(HTMLParser):
    """Rows of every table as (section id, [(cell text, span classes, hrefs)])."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.section = ""
        self.rows: list[tuple[str, list[tuple[str, list[str], list[str]]]]] = []
        self._cell: list[Any] | None = None
        self._row: list[tuple[str, list[str], list[str]]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "h2":
            self.section = a.get("id") or ""
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ["", [], []]
        elif tag == "span" and self._cell is not None:
            self._cell[1] += (a.get("class") or "").split()
        elif tag == "a" and self._cell is not None:
            self._cell[2].append(a.get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append((self._cell[0].strip(), self._cell[1], self._cell[2]))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append((self.section, self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[0] += data


def table_rows(page: str, section: str) -> list[list[tuple[str, list[str], list[str]]]]:
    """The rows of the tables under ``<h2 id=section>``."""
    parser = _Page()
    parser.feed(page)
    return [cells for where, cells in parser.rows if where == section]


def page_problems(page: str, results: Path, gates: list[dict[str, Any]]) -> list[str]:
    """Where the page misstates a gate's status or counts, or a run's freshness."""
    problems = []
    gate_rows = table_rows(page, "gates")
    for g in gates:
        match = [r for r in gate_rows if r[0][0] == g["gate"] and r[1][0] == g["kernel"]]
        if len(match) != 1:
            problems.append(f"{g['gate']}/{g['kernel']}: {len(match)} rows")
            continue
        text, classes, _ = match[0][2]
        if text.split()[0] != g["status"] or g["status"] not in classes:
            problems.append(f"{g['gate']}/{g['kernel']} is {g['status']}, shown {text!r} {classes}")
        shown = [c[0] for c in match[0][3:6]]
        if shown != [f"{g[k]:,}" for k in ("cases", "assertions", "words")]:
            problems.append(f"{g['gate']}/{g['kernel']} counts shown as {shown}")
    current = provenance.code_hash()
    run_rows = table_rows(page, "runs")
    for manifest in sorted(results.glob("*/*/manifest.json")):
        data = json.loads(manifest.read_text())
        want = "fresh" if data["code_hash"] == current else "stale"
        where = manifest.parent.relative_to(results).as_posix()
        rows = [r for r in run_rows if any(where in h for h in r[0][2])]
        if len(rows) != 1:
            problems.append(f"{where}: {len(rows)} rows")
        elif rows[0][2][0].split()[0] != want or want not in rows[0][2][1]:
            problems.append(f"{where} is {want}, shown {rows[0][2][0]!r}")
        elif data["git"]["short"] not in rows[0][3][0]:
            problems.append(f"{where}: commit {data['git']['short']} not shown")
    return problems
