"""Papermill reads every parameters line of every committed notebook.

It parses each line on its own and takes the comment as the parameter's help;
a line it cannot parse is left out of ``papermill --help-notebook`` with a
warning on every run. Marked ``notebook``: it imports papermill.
"""

from __future__ import annotations

import ast

import nbformat
import papermill
import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, discover

pytestmark = pytest.mark.notebook

NOTEBOOKS = discover(NOTEBOOKS_DIR)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_papermill_reads_every_parameter_line(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS[name], as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    names = [
        node.target.id
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    assert names and list(papermill.inspect_notebook(str(NOTEBOOKS[name]))) == names
