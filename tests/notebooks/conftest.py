"""Helpers to write throwaway notebooks for the failure-mode tests."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

PARAMETERS = (
    "seed: int = 0  # seed\nsmoke: bool = False  # small sizes\n"
    'run_dir: str = ""  # evidence directory'
)


def write_notebook(directory: Path, name: str, *sources: str, extra: str = "") -> Path:
    """A notebook with the standard parameters cell (plus ``extra`` lines) and ``sources``."""
    params = new_code_cell(PARAMETERS + (f"\n{extra}" if extra else ""))
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[params, *(new_code_cell(s) for s in sources)])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


# A notebook that files what a real one files (a table, a figure, a summary) in a second
# or two: for the tests of the runner, the index and the reports, not of a notebook's work.
FILING = """\
from matplotlib.figure import Figure

from fp8lab.evidence.filing import NotebookOutput

out = NotebookOutput(run_dir, {name!r})
out.table("rows", [{{"seed": seed, "square": seed * seed}}])
fig = Figure(figsize=(2, 2))
fig.add_subplot().plot([0, 1, 2], [0, seed, 2 * seed])
out.figure(fig, "line")
out.summary(verdicts={{"filed": "PASS"}}, numbers={{"seed": seed}}, parameters={{"seed": seed}})
"""


def write_filing_notebook(directory: Path, name: str = "filing") -> Path:
    """A notebook that writes one table, one figure and a summary through NotebookOutput."""
    return write_notebook(directory, name, FILING.format(name=name))
