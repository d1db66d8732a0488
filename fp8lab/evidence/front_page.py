"""``results/index.html``: the evidence front page a pull-request reviewer opens first.

Pure functions from plain rows (see :mod:`fp8lab.evidence.index`) to HTML:
one section each for the gates, the proofs, mutation and the detectors (the
runs: :mod:`fp8lab.evidence.front_runs`). The page loads nothing (no
scripts, fonts or images), and the same rows give the same bytes. Counts
carry thousands separators, scales are shown in decimal beside their exact
hex, and PENDING is its own colour and word: never a PASS.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from fp8lab.evidence.headline import expected_fail, number

__all__ = [
    "STYLE",
    "badge",
    "count",
    "detectors_section",
    "gates_section",
    "link",
    "mutation_section",
    "nan_class",
    "page",
    "proofs_section",
    "scale",
    "seconds",
    "table",
]

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;"
    "color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em;width:100%;"
    "table-layout:auto}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;"
    "vertical-align:top;overflow-wrap:anywhere}th{background:#f4f4f4}td.n{text-align:right;"
    "white-space:nowrap}.badge{font-weight:bold;padding:1px 6px;border-radius:3px;"
    "white-space:nowrap}.PASS,.fresh,.complete,.KILLED{background:#d7f5dd;color:#0a5c1a}"
    ".FAIL,.stale,.failed,.corrupt,.SURVIVED{background:#fdd;color:#8a0000}"
    ".PENDING,.partial,.non-default{background:#ffe9b3;color:#6b4a00;"
    "border:1px dashed #a67c00}.other{background:#eee}code{font-size:90%}"
    "nav a{margin-right:1em}details{margin:.5em 0 1.5em}.summary{font-size:110%}"
    ".expected{font-weight:bold;font-style:italic;color:#6b4a00;white-space:nowrap}"
)
NONE = "&ndash;"  # an empty cell
_GREEN = frozenset({"PASS", "fresh", "complete", "KILLED"})
_RED = frozenset({"FAIL", "stale", "failed", "corrupt", "SURVIVED", "kernel-error"})
_AMBER = frozenset({"PENDING", "partial", "non-default"})


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def count(value: Any) -> str:
    """An integer with thousands separators, ``2^32`` named; anything else as text."""
    if isinstance(value, bool) or not isinstance(value, int):
        return NONE if value is None else _e(value)
    text = f"{value:,}"
    return f"{text} (2^32)" if value == 1 << 32 else text


def scale(value: Any) -> str:
    """A scale in decimal (6 significant digits) beside its exact ``float.hex``."""
    x = number(value)
    if x is None:
        return NONE if value is None else _e(value)
    return f"{float(x):.6g} <code>{_e(float(x).hex())}</code>"


def seconds(value: Any) -> str:
    """A wall time in seconds, one decimal."""
    x = number(value)
    return NONE if x is None else f"{float(x):,.1f} s"


def badge(status: Any) -> str:
    """A status word in its colour; PENDING (owed, not run) is amber and dashed, never green."""
    word = str(status)
    css = word if word in _GREEN | _RED | _AMBER else "other"
    if word in ("kernel-error",):
        css = "FAIL"
    label = "PENDING (owed, not run)" if word == "PENDING" else word
    return f"<span class='badge {css}'>{_e(label)}</span>"


def table(head: Sequence[str], rows: Iterable[Sequence[str]], numeric: set[int]) -> str:
    """An HTML table: a header row, then ``rows``; the columns in ``numeric`` right-aligned."""
    cells = "".join(
        "<tr>"
        + "".join(
            f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return "<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>" + cells + "</table>"


def link(row: dict[str, Any]) -> str:
    """The kind of a run, linked to its report (or its folder)."""
    target = row.get("report") or f"{row.get('directory')}/"
    return f"<a href='{_e(target)}'>{_e(row.get('kind'))}</a>"


def _links(rows: Sequence[dict[str, Any]]) -> str:
    return ", ".join(link(r) for r in rows)


def gates_section(gates: Sequence[dict[str, Any]]) -> str:
    """Per gate and kernel: status, cases, assertions, words, reason, and the run it came from."""
    if not gates:
        return "<h2 id='gates'>Gates</h2><p>No run recorded a gate.</p>"
    tally = {s: sum(1 for g in gates if g["status"] == s) for s in ("PASS", "FAIL", "PENDING")}
    other = len(gates) - sum(tally.values())
    line = ", ".join(f"{n} {badge(s)}" for s, n in tally.items() if n)
    expected = sum(1 for g in gates if expected_fail(g))
    if expected:
        line += f" ({expected} of the FAILs expected)"
    if other:
        line += f", {other} other"
    rows = [
        (
            _e(g["gate"]),
            _e(g["kernel"]),
            badge(g["status"]) + _expected(g),
            count(g["cases"]),
            count(g["assertions"]),
            count(g["words"]),
            _e(g["reason"]) or NONE,
            _links(g.get("runs") or [g["run"]]),
        )
        for g in gates
    ]
    head = ("gate", "kernel", "status", "cases", "assertions", "words", "reason", "recorded by")
    note = (
        "<p>A FAIL marked <em>expected FAIL</em> is a negative control its notebook declares "
        "(<code>tables/expected_verdicts.json</code>) and asserts; the gate's own verdict "
        "stays FAIL. Any other FAIL recorded by a complete notebook run is explained in its "
        "report.</p>"
        if tally["FAIL"]
        else ""
    )
    return (
        f"<h2 id='gates'>Gates</h2><p>{len(gates)} verdicts (gate and kernel; "
        f"one row where runs agree): {line}.</p>{note}" + table(head, rows, {3, 4, 5})
    )


def _expected(record: dict[str, Any]) -> str:
    """``expected FAIL`` beside a declared negative control; a warning when it did not hold."""
    want = record.get("expected_status")
    if want is None:
        return ""
    why = _e(record.get("expected_why") or "")
    if want == record.get("status"):
        return f" <span class='expected'>expected {_e(want)}</span> <small>{why}</small>"
    return f" <span class='badge FAIL'>expected {_e(want)}, got {_e(record.get('status'))}</span>"


def nan_class(proof: dict[str, Any]) -> str:
    """What the proof found in the NaN-code class: identical, explained by a policy, or not."""
    differ = proof.get("nan_code_mismatches") or 0
    unexplained = proof.get("nan_code_unexplained") or 0
    if unexplained:
        return f"{count(unexplained)} unexplained of {count(differ)} differing"
    if not differ:
        return "identical"
    side, policy = proof.get("nan_code_exempt_side"), proof.get("nan_code_exempt_policy")
    return f"{count(differ)} differ, all explained: {_e(side)} has the fixed {_e(policy)} policy"


def proofs_section(proofs: Sequence[dict[str, Any]]) -> str:
    """Each exhaustive proof: what it compared, patterns examined, mismatches, NaN codes, time."""
    if not proofs:
        return "<h2 id='proofs'>Proofs</h2><p>No run recorded an exhaustive proof.</p>"
    rows = [
        (
            f"<code>{_e(p['a'])}</code> vs <code>{_e(p['b'])}</code>",
            _e(p["format"]),
            "saturate" if p.get("saturate") else "no saturation",
            _e(p.get("nan")),
            count(p["examined"]),
            count(p["mismatches"]),
            nan_class(p),
            seconds(p.get("wall_seconds")),
            badge(p.get("status")) + _expected(p),
            _links(p.get("runs") or [p["run"]]),
        )
        for p in proofs
    ]
    passed = sum(1 for p in proofs if p.get("status") == "PASS")
    expected = sum(1 for p in proofs if expected_fail(p))
    also = f" ({expected} of the FAILs expected)" if expected else ""
    head = (
        "compared",
        "format",
        "overflow",
        "NaN",
        "patterns examined",
        "mismatches",
        "NaN-code class",
        "wall time",
        "status",
        "run",
    )
    return (
        f"<h2 id='proofs'>Proofs</h2><p>{passed} of {len(proofs)} exhaustive proofs PASS{also}.</p>"
        + table(head, rows, {4, 5, 7})
    )


def mutation_section(mutation: dict[str, Any] | None) -> str:
    """Score, minimum kill margin, thin mutants, and each survivor with its justification."""
    if mutation is None:
        return "<h2 id='mutation'>Mutation</h2><p>No mutation run recorded a catalogue.</p>"
    score = number(mutation.get("score"))
    score_text = NONE if score is None else f"{float(score):.1%}"
    thin = ", ".join(_e(t) for t in mutation["thin"]) or "none"
    limit = mutation.get("threshold")
    thin_below = f" (a kill below {count(limit)} is thin)" if limit is not None else ""
    facts = [
        (
            "source mutation score",
            f"{score_text} ({count(mutation.get('source_killed'))} killed"
            f" of {count(mutation.get('source_mutants'))}, {count(mutation.get('justified'))}"
            " justified equivalent)",
        ),
        (
            "catalogue",
            f"{count(mutation['catalogue_killed'])} of {count(mutation['catalogue'])} killed",
        ),
        ("minimum kill margin", count(mutation["min_margin"]) + " failed assertions" + thin_below),
        ("thin mutants", thin),
    ]
    dl = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in facts)
    rows = [
        (
            f"<code>{_e(s['id'])}</code>",
            f"<code>{_e(s['description'])}</code>",
            _e(s["reason"]) if s.get("reason") else "<b>no justification recorded</b>",
        )
        for s in mutation["survivors"]
    ]
    source = _e(mutation.get("reason_source", ""))
    survivors = (
        f"<details open><summary>{len(rows)} survivors, each with its justification{source}"
        "</summary>" + table(("mutant", "change", "justification"), rows, set()) + "</details>"
        if rows
        else "<p>No survivors recorded.</p>"
    )
    return (
        f"<h2 id='mutation'>Mutation</h2><p>From {link(mutation['run'])}.</p>"
        f"<table>{dl}</table>{survivors}"
    )


def detectors_section(detectors: Sequence[dict[str, Any]]) -> str:
    """The detector headline counts, per scale, with the run each came from."""
    if not detectors:
        return "<h2 id='detectors'>Detectors</h2><p>No run recorded detector counts.</p>"
    rows = [
        (
            _e(d["what"]),
            NONE if d.get("scale") is None else scale(d["scale"]),
            count(d.get("count")) + (f" of {count(d['of'])}" if d.get("of") is not None else ""),
            count(d.get("published")) if "published" in d else NONE,
            link(d["run"]),
        )
        for d in detectors
    ]
    head = ("count", "scale", "measured", "published", "run")
    return "<h2 id='detectors'>Detectors</h2>" + table(head, rows, {2, 3})


def page(summary: str, sections: Sequence[str]) -> str:
    """The whole front page: a summary line, a table of contents, then the sections."""
    nav = "".join(
        f"<a href='#{a}'>{t}</a>"
        for a, t in (
            ("gates", "Gates"),
            ("proofs", "Proofs"),
            ("mutation", "Mutation"),
            ("detectors", "Detectors"),
            ("runs", "Runs"),
        )
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>fp8lab evidence</title><style>{STYLE}</style></head><body>"
        f"<h1>fp8lab evidence</h1><p class='summary'>{summary}</p><nav>{nav}</nav>"
        + "".join(sections)
        + "</body></html>\n"
    )
