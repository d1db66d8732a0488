"""The HTML report of an executed notebook, byte-identical for identical visible evidence.

The report shows the parameters the run used, not only the defaults: the
papermill-injected cell is kept, rewritten from the run's parameters in the
order the notebook declares them, with ``run_dir`` (which differs per run)
shown as a placeholder. A banner above the first cell says whether the run
used the defaults, and a smoke run says so there first. The cell tagged
``report-summary`` (:data:`fp8lab.evidence.shown.SUMMARY_TAG`, the run's
summary: verdicts, key numbers, parameters) follows the banner, its code
hidden, so every report opens with its conclusions. Cell ids
are renumbered and execution timestamps are removed from the metadata.

The report loads nothing from the network, so it opens offline (in a CI
artifact viewer, say): the lab template's ``<script>`` tags for require.js,
MathJax, mermaid and the widget manager, each fetched from a CDN, are left
out (:data:`STANDALONE_TEMPLATE`). No notebook here uses LaTeX, mermaid or
widgets; figures are embedded SVG. Its stylesheet is fp8lab's own
``report.css`` (a few dozen lines, inline), not the JupyterLab theme of
several thousand lines that every report would otherwise repeat.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell

from fp8lab.evidence.parameters import (
    OWNED_BY_RUNNER,
    ParameterError,
    declared_parameters,
    non_default,
)
from fp8lab.evidence.shown import SUMMARY_TAG

__all__ = ["STANDALONE_TEMPLATE", "STYLESHEET", "parameters_banner", "render_report"]

_VOLATILE_KEYS = ("papermill", "execution", "widgets")
_INJECTED = "injected-parameters"
RUN_DIR_SHOWN = "<this run's directory>"
_TEMPLATE_NAME = "fp8lab-standalone.html.j2"
STYLESHEET = Path(__file__).with_name("report.css")
STANDALONE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head -%}
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{{ resources['metadata']['name'] | escape_html_keep_quotes }}</title>
<style type="text/css">
{{ resources['fp8lab_css'] }}
</style>
{%- endblock html_head -%}
"""


def parameters_banner(params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """Markdown that says, first, whether this is a smoke run and which parameters differ."""
    changed = non_default(params, defaults)
    lines = []
    if params.get("smoke"):
        lines.append(
            "**SMOKE RUN** (`smoke = True`): reduced sizes. This is not the notebook's "
            "published evidence; that is a run at the default parameters."
        )
    if changed:
        shown = ", ".join(
            f"`{k} = {v!r}` (default `{defaults[k]!r}`)" if k in defaults else f"`{k} = {v!r}`"
            for k, v in changed.items()
        )
        lines.append(f"**Run with non-default parameters:** {shown}.")
    else:
        lines.append("Run at the notebook's default parameters.")
    return "\n\n".join(lines)


def _injected_source(params: Mapping[str, Any], order: list[str]) -> str:
    names = [n for n in order if n in params] + sorted(set(params) - set(order))
    lines = ["# Parameters of this run (injected by the runner; they override the cell above)"]
    for name in names:
        value = RUN_DIR_SHOWN if name in OWNED_BY_RUNNER else params[name]
        lines.append(f"{name} = {value!r}")
    return "\n".join(lines)


def render_report(executed: Path) -> bytes:
    """Render ``executed`` to standalone HTML bytes."""
    nb = nbformat.read(executed, as_version=4)
    params = dict(nb.metadata.get("papermill", {}).get("parameters") or {})
    try:
        declared = declared_parameters(executed)
    except ParameterError:
        declared = {}  # the banner then names every parameter as non-default
    defaults = {name: d.default for name, d in declared.items()}
    source = _injected_source(params, list(declared))
    injected = [c for c in nb.cells if _INJECTED in c.metadata.get("tags", [])]
    for cell in injected:
        cell.source = source
    if params and not injected:
        cell = new_code_cell(source, metadata={"tags": [_INJECTED]})
        tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
        nb.cells.insert(tagged[0] + 1 if tagged else 0, cell)
    summaries = [c for c in nb.cells if SUMMARY_TAG in c.metadata.get("tags", [])]
    nb.cells = [c for c in nb.cells if SUMMARY_TAG not in c.metadata.get("tags", [])]
    for cell in summaries:
        cell.metadata["transient"] = {"remove_source": True}
    nb.cells[0:0] = [new_markdown_cell(parameters_banner(params, defaults)), *summaries]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index}"
        for key in _VOLATILE_KEYS:
            cell.metadata.pop(key, None)
    for key in _VOLATILE_KEYS:
        nb.metadata.pop(key, None)
    exporter = HTMLExporter(
        template_name="lab",
        embed_images=True,
        extra_loaders=[DictLoader({_TEMPLATE_NAME: STANDALONE_TEMPLATE})],
        template_file=_TEMPLATE_NAME,
    )
    resources = {"metadata": {"name": executed.stem}, "fp8lab_css": STYLESHEET.read_text()}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body.encode()
