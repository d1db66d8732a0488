"""``results/index.html``: the evidence front page a pull-request reviewer opens first.

Plain rows (see :mod:`fp8lab.evidence.index`) rendered by Jinja2 with
autoescape on, from the templates in ``evidence/templates/``: one section each
for the gates, the proofs, mutation and the detectors (the runs:
:mod:`fp8lab.evidence.front_runs`). Every value a run wrote is escaped by the
template engine, never by hand. The page loads nothing (no scripts, fonts or
images; its stylesheet is the reports' ``report.css``, inline), and the same
rows give the same bytes. Counts carry thousands separators, scales are shown
in decimal beside their exact hex, and PENDING is its own colour and word:
never a PASS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from fp8lab.evidence.headline import expected_fail, number
from fp8lab.evidence.report import STYLESHEET

__all__ = [
    "NONE",
    "STYLE",
    "Badge",
    "badge",
    "count",
    "detectors_section",
    "gates_section",
    "mutation_section",
    "nan_class",
    "page",
    "proofs_section",
    "render",
    "scale",
    "seconds",
]

STYLE = STYLESHEET.read_text(encoding="utf-8")
NONE = "\N{EN DASH}"  # an empty cell
_GREEN = frozenset({"PASS", "fresh", "complete", "KILLED"})
_RED = frozenset({"FAIL", "stale", "failed", "corrupt", "interrupted", "SURVIVED", "kernel-error"})
_AMBER = frozenset({"PENDING", "partial", "non-default"})
_ENV = Environment(
    loader=PackageLoader("fp8lab.evidence", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


class Badge(NamedTuple):
    """A status as the page shows it: its CSS class and its word."""

    css: str
    label: str


def count(value: Any) -> str:
    """An integer with thousands separators, ``2^32`` named; anything else as text."""
    if isinstance(value, bool) or not isinstance(value, int):
        return NONE if value is None else str(value)
    text = f"{value:,}"
    return f"{text} (2^32)" if value == 1 << 32 else text


def scale(value: Any) -> tuple[str, str] | None:
    """A scale in decimal (6 significant digits) and its exact ``float.hex``; None if no number."""
    x = number(value)
    return None if x is None else (f"{float(x):.6g}", float(x).hex())


def seconds(value: Any) -> str:
    """A wall time in seconds, one decimal."""
    x = number(value)
    return NONE if x is None else f"{float(x):,.1f} s"


def badge(status: Any) -> Badge:
    """A status in its colour; PENDING (owed, not run) is amber and dashed, never green."""
    word = str(status)
    css = word if word in _GREEN | _RED | _AMBER else "other"
    if word == "kernel-error":
        css = "FAIL"
    return Badge(css, "PENDING (owed, not run)" if word == "PENDING" else word)


def nan_class(proof: dict[str, Any]) -> str:
    """What the proof found in the NaN-code class: identical, explained by a policy, or not."""
    differ = proof.get("nan_code_mismatches") or 0
    unexplained = proof.get("nan_code_unexplained") or 0
    if unexplained:
        return f"{count(unexplained)} unexplained of {count(differ)} differing"
    if not differ:
        return "identical"
    side, policy = proof.get("nan_code_exempt_side"), proof.get("nan_code_exempt_policy")
    return f"{count(differ)} differ, all explained: {side} has the fixed {policy} policy"


def render(template: str, macro: str, **values: Any) -> Markup:
    """``macro`` of ``template`` called with ``values``, the helpers of this module in scope.

    The helpers are looked up when called, so a test can replace one (a planted defect).
    """
    helpers = {
        "NONE": NONE,
        "badge": badge,
        "count": count,
        "nan_class": nan_class,
        "scale": scale,
        "seconds": seconds,
    }
    module = _ENV.get_template(template).make_module(helpers)
    return Markup(getattr(module, macro)(**values))


def gates_section(gates: Sequence[dict[str, Any]]) -> Markup:
    """Per gate and kernel: status, cases, assertions, words, reason, and the run it came from."""
    tally = [(s, sum(1 for g in gates if g["status"] == s)) for s in ("PASS", "FAIL", "PENDING")]
    return render(
        "front_page.html.j2",
        "gates_section",
        gates=gates,
        tally=tally,
        fails=tally[1][1],
        expected=sum(1 for g in gates if expected_fail(g)),
        other=len(gates) - sum(n for _, n in tally),
    )


def proofs_section(proofs: Sequence[dict[str, Any]]) -> Markup:
    """Each exhaustive proof: what it compared, patterns examined, mismatches, NaN codes, time."""
    return render(
        "front_page.html.j2",
        "proofs_section",
        proofs=proofs,
        passed=sum(1 for p in proofs if p.get("status") == "PASS"),
        expected=sum(1 for p in proofs if expected_fail(p)),
    )


def mutation_section(mutation: dict[str, Any] | None) -> Markup:
    """Score, minimum kill margin, thin mutants, and each survivor with its justification."""
    score = None if mutation is None else number(mutation.get("score"))
    return render(
        "front_page.html.j2",
        "mutation_section",
        mutation=mutation,
        score=NONE if score is None else f"{float(score):.1%}",
        limit=None if mutation is None else mutation.get("threshold"),
    )


def detectors_section(detectors: Sequence[dict[str, Any]]) -> Markup:
    """The detector headline counts, per scale, with the run each came from."""
    return render("front_page.html.j2", "detectors_section", detectors=detectors)


def page(summary: str, sections: Sequence[Markup]) -> str:
    """The whole front page: a summary line, a table of contents, then the sections."""
    css = Markup(STYLE)  # fp8lab's own stylesheet (package data), never a run's value
    return str(render("front_page.html.j2", "page", summary=summary, sections=sections, css=css))
