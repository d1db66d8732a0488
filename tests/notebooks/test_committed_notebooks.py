"""The committed notebooks: stripped, one typed parameters cell, the required parameters."""

from __future__ import annotations

import ast

import nbformat
import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR, REQUIRED_PARAMETERS, discover

NOTEBOOKS = discover(NOTEBOOKS_DIR)


def test_there_are_notebooks() -> None:
    assert {"codec_atlas", "gate_g1"} <= set(NOTEBOOKS)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_without_outputs_and_with_one_parameters_cell(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS[name], as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(not c.outputs and c.execution_count is None for c in code)
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    lines = [ln for ln in tagged[0].source.splitlines() if ln.strip()]
    names = []
    for line in lines:
        statement, _, comment = line.partition("#")
        assert comment.strip(), f"{name}: parameter line without a comment: {line!r}"
        node = ast.parse(statement).body[0]
        assert isinstance(node, ast.AnnAssign), f"{name}: parameters must be typed: {line!r}"
        ast.literal_eval(node.value)  # type: ignore[arg-type]
        names.append(node.target.id)  # type: ignore[union-attr]
    assert set(REQUIRED_PARAMETERS) <= set(names)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebooks_import_only_fp8lab(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS[name], as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert module and module.split(".")[0] in {"fp8lab", "numpy"}, module
