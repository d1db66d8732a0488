"""Figures saved as deterministic SVG: a fixed hash salt and no date."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib as mpl
from matplotlib.figure import Figure

from fp8lab.runtime.atomic import write_atomic

__all__ = ["SVG_SALT", "figure_svg", "save_figure"]

SVG_SALT = "fp8lab"


def figure_svg(fig: Figure) -> bytes:
    """The SVG bytes of ``fig``; identical figures give identical bytes."""
    buffer = io.BytesIO()
    with mpl.rc_context({"svg.hashsalt": SVG_SALT, "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "fp8lab"})
    return buffer.getvalue()


def save_figure(fig: Figure, directory: Path, name: str) -> tuple[Path, bytes]:
    """Write ``<directory>/figures/<name>.svg``; return the path and the bytes."""
    data = figure_svg(fig)
    return write_atomic(Path(directory) / "figures" / f"{name}.svg", data), data
