"""What a notebook uses to file its evidence: tables as sidecars, figures as SVG.

A notebook makes one :class:`NotebookOutput` from its ``run_dir`` parameter.
Under ``fp8lab evidence`` that is the run's staging directory; empty means an
interactive run, which writes to ``notebooks/runs/<notebook>-<utc>/`` (inside
``make lab``'s root, so JupyterLab can open it; git ignores it), or under
``$FP8LAB_SCRATCH`` when that is set, and prints where.

Tables are shown as HTML, long ones folded, each output naming its sidecar
and the sidecar's sha256 (:mod:`fp8lab.evidence.table_check` compares them),
and :meth:`NotebookOutput.summary` shows the summary the report opens with
(:mod:`fp8lab.evidence.shown`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
from IPython.display import HTML, SVG, display
from matplotlib.figure import Figure

from fp8lab.evidence.figures import save_figure
from fp8lab.evidence.run_dir import STAGING
from fp8lab.evidence.shown import summary_html, summary_rows, table_html
from fp8lab.evidence.sidecar import write_sidecar
from fp8lab.evidence.table_check import SIDECAR_KEY
from fp8lab.runtime.atomic import write_atomic
from fp8lab.runtime.locations import checkout_root, notebooks_dir

__all__ = ["NotebookOutput"]

SCRATCH_ENV = "FP8LAB_SCRATCH"
# inside `make lab`'s root in a checkout (git ignores it); ./notebook-runs for an installed fp8lab
INTERACTIVE_ROOT = (
    notebooks_dir() / "runs" if checkout_root() is not None else Path("notebook-runs").resolve()
)


class NotebookOutput:
    """Where one notebook run writes its sidecars and figures.

    Args:
        run_dir: the run directory, or "" for an interactive scratch run.
        notebook: the notebook's name, for the scratch folder.
    """

    def __init__(self, run_dir: str, notebook: str) -> None:
        if run_dir:
            self.directory = Path(run_dir)
        else:
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
            scratch = Path(os.environ.get(SCRATCH_ENV, INTERACTIVE_ROOT))
            self.directory = scratch / f"{notebook}-{stamp}"
        self.directory.mkdir(parents=True, exist_ok=True)
        staged = self.directory.parent.name == STAGING
        # the results root of an evidence run (``<results>/.staging/<run>``); None otherwise
        self.results_root: Path | None = self.directory.parents[1] if staged else None
        self.written: list[Path] = []
        if not run_dir:
            print(f"Interactive run: tables and figures go to {_shown(self.directory)}")

    def table(self, name: str, rows: Sequence[Any], columns: Sequence[str] = ()) -> None:
        """Write ``rows`` as the sidecar ``tables/<name>.json`` and show them.

        Args:
            name: sidecar name.
            rows: dataclasses or dicts; the sidecar keeps every field (floats in hex).
            columns: the fields to show (default: all of the first row's).
        """
        sidecar = write_sidecar(self.directory / "tables", name, list(rows))
        self.written.append(sidecar)
        dicts = [
            asdict(r) if is_dataclass(r) and not isinstance(r, type) else dict(r) for r in rows
        ]
        shown = list(columns) or (list(dicts[0]) if dicts else [])
        display(HTML(table_html(name, shown, dicts)), metadata=_recorded(name, sidecar))

    def summary(
        self,
        verdicts: Mapping[str, Any],
        numbers: Mapping[str, Any],
        parameters: Mapping[str, Any],
    ) -> None:
        """Write ``tables/report_summary.json`` and show the summary the report opens with.

        Call it from a cell tagged ``report-summary`` (the report renderer moves
        that cell to the top), with values computed from this run's records.

        Args:
            verdicts: name -> status (``PASS``, ``FAIL``, ``PENDING``, or a sentence
                that starts with one, such as ``FAIL (expected: negative control)``).
            numbers: name -> the key numbers (counts are shown with separators).
            parameters: the run's parameters.
        """
        rows = summary_rows(verdicts, numbers, parameters)
        sidecar = write_sidecar(self.directory / "tables", "report_summary", rows)
        self.written.append(sidecar)
        display(HTML(summary_html(rows)), metadata=_recorded("report_summary", sidecar))

    def arrays(self, name: str, **arrays: np.ndarray) -> None:
        """Write ``arrays/<name>.npz`` (compressed) for data too large for a table."""
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # numpy stub: allow_pickle
        path = write_atomic(self.directory / "arrays" / f"{name}.npz", buffer.getvalue())
        self.written.append(path)

    def figure(self, fig: Figure, name: str) -> None:
        """Save ``fig`` as ``figures/<name>.svg`` and show it inline."""
        path, data = save_figure(fig, self.directory, name)
        self.written.append(path)
        display(SVG(data=data))


def _recorded(name: str, sidecar: Path) -> dict[str, Any]:
    """The shown table's output metadata: which sidecar it is, and that sidecar's sha256."""
    digest = hashlib.sha256(sidecar.read_bytes()).hexdigest()
    return {SIDECAR_KEY: {"name": name, "sha256": digest}}


def _shown(directory: Path) -> str:
    """``directory`` absolute, and relative to the working directory (the notebook's folder)."""
    absolute = directory.resolve()
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return str(absolute)
    return f"{absolute} ({relative} from here)"
