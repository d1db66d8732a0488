"""The HTML report of an executed notebook, byte-identical for identical visible evidence.

Before export: the papermill-injected parameters cell is dropped (its run
directory differs per run; the manifest keeps the parameters), cell ids are
renumbered, and execution timestamps are removed from the metadata.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

__all__ = ["render_report"]

_VOLATILE_KEYS = ("papermill", "execution", "widgets")


def render_report(executed: Path) -> bytes:
    """Render ``executed`` to standalone HTML bytes."""
    nb = nbformat.read(executed, as_version=4)
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index}"
        for key in _VOLATILE_KEYS:
            cell.metadata.pop(key, None)
    for key in _VOLATILE_KEYS:
        nb.metadata.pop(key, None)
    exporter = HTMLExporter(template_name="lab", embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": executed.stem}})
    return body.encode()
