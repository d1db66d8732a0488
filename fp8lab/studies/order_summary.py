"""The accumulation_order notebook's summary: verdicts, key numbers, parameters.

:func:`order_summary` reads the study's rows (no new computation) and returns
an :class:`OrderSummary`; its :meth:`~OrderSummary.verdicts`,
:meth:`~OrderSummary.numbers` and ``parameters`` go to
``NotebookOutput.summary`` in the cell tagged ``report-summary``, which the
report shows first. A verdict is ``PASS``, ``FAIL (...)`` or ``PENDING (...)``
(torch absent); ``_repr_markdown_`` shows the same lines in a notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fp8lab.studies.order import OrderRow
from fp8lab.studies.order_epilogue_cost import EpilogueCost

__all__ = ["OrderSummary", "SummaryLine", "order_summary"]


@dataclass(frozen=True)
class SummaryLine:
    """One line: what it is about, the verdict (or "" for numbers only), the key numbers."""

    topic: str
    verdict: str
    numbers: str


@dataclass(frozen=True)
class OrderSummary:
    """Parameters first, then one line per finding."""

    parameters: tuple[tuple[str, str], ...]
    rows: tuple[SummaryLine, ...]

    def verdicts(self) -> dict[str, str]:
        """Topic -> verdict, for the lines that have one."""
        return {r.topic: r.verdict for r in self.rows if r.verdict}

    def numbers(self) -> dict[str, str]:
        """Topic -> key numbers, every line."""
        return {r.topic: r.numbers for r in self.rows}

    def parameter_values(self) -> dict[str, str]:
        """Name -> value (as text)."""
        return dict(self.parameters)

    def _repr_markdown_(self) -> str:
        params = ", ".join(f"`{k}` = {v}" for k, v in self.parameters)
        lines = ["## Summary", "", f"Parameters: {params}", "", "| topic | verdict | numbers |"]
        lines.append("|---|---|---|")
        lines += [f"| {r.topic} | **{r.verdict or '-'}** | {r.numbers} |" for r in self.rows]
        return "\n".join(lines)


def _verdicts(rows: Sequence[OrderRow]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r.verdict] = out.get(r.verdict, 0) + 1
    return out


def _families(rows: Sequence[OrderRow], target: str, m: int) -> str:
    picked = [r for r in rows if r.target == target and r.m == m]
    return "; ".join(f"K={r.k}: {r.family} ({r.calls:,} calls)" for r in picked)


def _models(rows: Sequence[OrderRow]) -> SummaryLine:
    named = sum(r.family != "no known family" for r in rows)
    fused = [r for r in rows if r.target.startswith("fused") and r.k == max(x.k for x in rows)]
    cost = "; ".join(
        f"{r.target} at K={r.k}: {r.queries:,} outputs in {r.calls:,} calls, {r.seconds:.1f} s"
        for r in fused
    )
    verdict = "PASS" if named == len(rows) > 0 else f"FAIL ({len(rows) - named} unnamed)"
    numbers = f"{named} of {len(rows)} rows named; {cost}"
    return SummaryLine("fp8lab models inferred and named", verdict, numbers)


def _library(name: str, rows: Sequence[OrderRow], target: str, note: str = "") -> SummaryLine:
    """PASS when every row is reproduced, or reported as having no fixed order with evidence."""
    if note:
        return SummaryLine(name, f"PENDING ({note})", "not run")
    n = len(rows)
    counts = _verdicts(rows)
    ok, loose = counts.get("reproduced", 0), counts.get("not-fixed", 0)
    if ok == n > 0:
        verdict = "PASS"
    elif ok + loose == n > 0:
        verdict = f"PASS ({loose} of {n} rows: no fixed order, with the evidence)"
    else:
        verdict = f"FAIL ({n - ok - loose} of {n} rows neither reproduced nor shown unfixed)"
    classes = max((r.classes for r in rows), default=0)
    shapes = sorted({r.m for r in rows if r.target == target}, reverse=True)
    fams = " / ".join(f"M={m}: {_families(rows, target, m)}" for m in shapes)
    host = next((f"{r.cpu}, {r.blas}, {r.core_type}, {r.threads} threads" for r in rows), "")
    return SummaryLine(
        name,
        verdict,
        f"{ok} of {n} rows reproduced bit for bit at every output (up to {classes} position"
        f" classes per product); host: {host}; {fams}",
    )


def order_summary(
    parameters: Mapping[str, Any],
    model_rows: Sequence[OrderRow],
    numpy_rows: Sequence[OrderRow],
    torch_rows: Sequence[OrderRow],
    worst_ratio: Mapping[str, float],
    costs: Sequence[EpilogueCost],
    no_torch: str,
) -> OrderSummary:
    """The summary from the results (``no_torch``: the family text of the no-torch row)."""
    lines = [_models(model_rows), _library("numpy.matmul", numpy_rows, "numpy.matmul")]
    absent = next((r.note for r in torch_rows if r.family == no_torch), "")
    for target in sorted({r.target for r in torch_rows if not absent}):
        lines.append(_library(target, [r for r in torch_rows if r.target == target], target))
    if absent:
        lines.append(_library("torch", [], "", absent))
    ratios = ", ".join(f"{k} {v:.3g}" for k, v in worst_ratio.items())
    lines.append(SummaryLine("fused vs sequential error", "", f"worst error / bound: {ratios}"))
    for inter in sorted({c.intermediate for c in costs}):
        text = ", ".join(
            f"{c.epilogue} {c.off_exact:,}/{c.outputs:,} off (max {c.max_ulps} ulp)"
            for c in costs
            if c.intermediate == inter
        )
        lines.append(SummaryLine(f"epilogue cost, intermediate {inter}", "", text))
    params = tuple((k, repr(v)) for k, v in parameters.items())
    return OrderSummary(params, tuple(lines))
