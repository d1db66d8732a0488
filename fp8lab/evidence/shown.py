"""How a notebook shows its records to a reader: the report summary and folded tables.

Pure functions from records to HTML ("Every report opens with a
summary ... the long tables after them, folded"). The records themselves
stay exact in their sidecars; only what is shown is rounded:

- integers carry thousands separators, ``2^32`` named;
- floats show 6 significant digits (no 17-digit floats in prose tables);
  a column whose name says it holds a scale shows its exact ``float.hex``
  (trailing zero digits dropped) beside the decimal;
- a table longer than :data:`FOLD_ROWS` rows is folded in ``<details>``.

The report renderer (:mod:`fp8lab.evidence.report`) moves the cell tagged
:data:`SUMMARY_TAG` to the top of the report. The same records give the same
bytes.
"""

from __future__ import annotations

import html
import math
import struct
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

__all__ = [
    "FOLD_ROWS",
    "SUMMARY_CLASS",
    "SUMMARY_TAG",
    "html_table",
    "shown_value",
    "summary_html",
    "summary_rows",
    "table_html",
]

FOLD_ROWS = 12  # a table with more rows than this is folded
SUMMARY_TAG = "report-summary"  # the cell tag the report renderer moves to the top
SUMMARY_CLASS = "fp8lab-summary"  # the summary's HTML class, which the render tests look for
_STATUS_COLOURS = {"PASS": "#d7f5dd", "FAIL": "#fdd", "PENDING": "#ffe9b3"}
# JupyterLab's stylesheet right-aligns every table cell; text reads better left-aligned.
_LEFT, _RIGHT = " style='text-align:left'", " style='text-align:right'"


def _is_scale(column: str) -> bool:
    return column == "scale" or column.startswith("scale_") or column.endswith("_scale")


def _needs_hex(value: float, text: str, column: str) -> bool:
    """Whether ``value`` shows its exact hex beside ``text`` (its six digits).

    A scale always does; so does a float32 value (an input, an amax) that six
    digits would not give back, where one ulp is the point. A float64 statistic does not.
    """
    as_f32 = struct.unpack("<f", struct.pack("<f", value))[0] if abs(value) < 3.4e38 else None
    return _is_scale(column) or (as_f32 == value and float(text) != value)


def _short_hex(value: float) -> str:
    """``float.hex`` without its trailing zero digits (``0x1.2d7732p-7``); still exact."""
    mantissa, exponent = value.hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}"


def shown_value(value: Any, column: str = "") -> str:
    """``value`` as a reader sees it in a table (plain text; escape it for HTML)."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,} (2^32)" if value == 1 << 32 else f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0:
            return repr(value)
        text = f"{value:.6g}"
        return f"{text} ({_short_hex(value)})" if _needs_hex(value, text, column) else text
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # a numpy scalar
        return shown_value(value.item(), column)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {shown_value(v)}" for k, v in value.items() if v)
    if isinstance(value, list | tuple):
        return ", ".join(shown_value(v, column) for v in value)
    return str(value)


def html_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """An HTML table of ``rows`` (dicts) over ``columns``, numbers right-aligned, text left."""
    head = "".join(f"<th{_LEFT}>{html.escape(c)}</th>" for c in columns)
    body = ""
    for row in rows:
        cells = ""
        for column in columns:
            value = row.get(column)
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            align = _RIGHT if numeric else _LEFT
            cells += f"<td{align}>{html.escape(shown_value(value, column))}</td>"
        body += f"<tr>{cells}</tr>"
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def table_html(name: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """A named table; folded (``<details>``, closed) when it has more than FOLD_ROWS rows."""
    title = f"<strong>{html.escape(name)}</strong> ({len(rows):,} rows)"
    table = html_table(columns, rows)
    if len(rows) > FOLD_ROWS:
        return (
            f"<details class='fp8lab-fold'><summary>{title}, folded: click to open"
            f"</summary>{table}</details>"
        )
    return f"<p>{title}</p>{table}"


def summary_rows(
    verdicts: Mapping[str, Any], numbers: Mapping[str, Any], parameters: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The summary as records: one row per verdict, key number and parameter."""
    return (
        [{"part": "verdict", "name": k, "value": _plain(v)} for k, v in verdicts.items()]
        + [{"part": "number", "name": k, "value": _plain(v)} for k, v in numbers.items()]
        + [{"part": "parameter", "name": k, "value": _plain(v)} for k, v in parameters.items()]
    )


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "item") and not isinstance(value, str | bytes | list | tuple | dict):
        return value.item()
    return value


def _verdict(value: Any) -> str:
    text = shown_value(value)
    colour = _STATUS_COLOURS.get(text.split(" ", 1)[0])
    if colour is None:
        return html.escape(text)
    return (
        f"<span style='background:{colour};font-weight:bold;padding:1px 6px;"
        f"border-radius:3px'>{html.escape(text)}</span>"
    )


def summary_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary block a report opens with, from :func:`summary_rows`' records."""
    parts = []
    for part, title in (("verdict", "Verdicts"), ("number", "Key numbers")):
        mine = [r for r in rows if r["part"] == part]
        if not mine:
            continue
        cells = "".join(
            f"<tr><td{_LEFT}>{html.escape(str(r['name']))}</td><td{_LEFT}>"
            + (_verdict(r["value"]) if part == "verdict" else html.escape(shown_value(r["value"])))
            + "</td></tr>"
            for r in mine
        )
        parts.append(f"<h3>{title}</h3><table><tbody>{cells}</tbody></table>")
    params = ", ".join(
        f"<code>{html.escape(str(r['name']))} = {html.escape(repr(r['value']))}</code>"
        for r in rows
        if r["part"] == "parameter"
    )
    parts.append(f"<p><strong>Parameters:</strong> {params or 'none'}</p>")
    return (
        f"<div class='{SUMMARY_CLASS}' id='{SUMMARY_CLASS}'><h2>Summary</h2>"
        "<p>Computed by this run from its own records (the cell tagged "
        f"<code>{SUMMARY_TAG}</code>, <code>out.summary</code>; sidecar "
        "<code>tables/report_summary.json</code>). "
        f"Long tables below are folded.</p>{''.join(parts)}</div>"
    )
