"""A failed notebook names the cell as the user numbers it, its line, and why.

And a failed run gets a report.html like a complete one.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from fp8lab.evidence.execute import NotebookRunError, execution_problems, run_notebook
from tests.notebooks.conftest import PARAMETERS

pytestmark = pytest.mark.notebook

FAILING_CELL = 'total = 2 + 2\nassert total == 5, "totals differ"\nprint("unreached")'


def _notebook(path: Path, *cells: nbformat.NotebookNode) -> Path:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nbformat.write(nb, path)
    return path


def _tagged(cell: nbformat.NotebookNode, tag: str) -> nbformat.NotebookNode:
    cell.metadata["tags"] = [tag]
    return cell


def test_an_error_names_the_users_cell_line_source_and_message(tmp_path: Path) -> None:
    """An executed notebook as papermill leaves it: its banner and injected cells come first."""
    error = new_output(
        "error",
        ename="AssertionError",
        evalue="totals differ",
        traceback=[
            "\x1b[0;31mAssertionError\x1b[0m  Traceback (most recent call last)",
            "Cell \x1b[0;32mIn[4], line 2\x1b[0m\n\x1b[1;32m      1\x1b[0m total = 2 + 2",
            "\x1b[0;31mAssertionError\x1b[0m: totals differ",
        ],
    )
    failing = new_code_cell(FAILING_CELL, execution_count=4, outputs=[error])
    path = _notebook(
        tmp_path / "executed.ipynb",
        _tagged(new_markdown_cell("An Exception was encountered"), "papermill-error-cell-tag"),
        _tagged(new_code_cell(PARAMETERS, execution_count=1), "parameters"),
        _tagged(new_code_cell("seed = 1", execution_count=2), "injected-parameters"),
        new_markdown_cell("# The user's title"),
        new_code_cell("x = 1", execution_count=3),
        failing,
        new_code_cell("y = 2"),
    )
    assert execution_problems(path) == [
        'cell 4 line 2 `assert total == 5, "totals differ"` raised AssertionError: totals differ',
        "cell 5 never executed",
    ]


def test_an_error_without_a_cell_frame_still_names_the_cell(tmp_path: Path) -> None:
    error = new_output("error", ename="RuntimeError", evalue="", traceback=["RuntimeError"])
    path = _notebook(
        tmp_path / "executed.ipynb",
        new_code_cell("x = 1", execution_count=1),
        new_code_cell("raise RuntimeError", execution_count=2, outputs=[error]),
        new_code_cell("a"),
        new_code_cell("b"),
    )
    assert execution_problems(path) == ["cell 2 raised RuntimeError", "cells 3, 4 never executed"]


@pytest.mark.slow
def test_a_failed_run_says_why_in_the_users_terms_and_gets_a_report(tmp_path: Path) -> None:
    params = _tagged(new_code_cell(PARAMETERS), "parameters")
    source = _notebook(
        tmp_path / "fails.ipynb",
        new_markdown_cell("# A notebook that fails"),
        params,
        new_code_cell(FAILING_CELL),
        new_code_cell("print('after')"),
    )
    expected = (
        'cell 3 line 2 `assert total == 5, "totals differ"` raised AssertionError: totals differ'
    )
    with pytest.raises(NotebookRunError) as caught:
        run_notebook(source, tmp_path / "results")
    assert expected in str(caught.value)
    (run,) = (tmp_path / "results" / "failed" / "fails").iterdir()
    assert caught.value.folder == f"failed/fails/{run.name}"  # under the results root
    manifest = json.loads((run / "manifest.json").read_text())
    assert expected in manifest["reason"]
    assert "report.html" in manifest["files"]
    assert "totals differ" in (run / "report.html").read_text()
