"""Whether a figure's tick labels overlap, measured on the drawn figure."""

from __future__ import annotations

import itertools

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def overlapping_ticks(fig: Figure) -> list[str]:
    """Each pair of neighbouring visible tick labels on one axis whose boxes intersect."""
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    fig.draw(renderer)
    found = []
    for n, ax in enumerate(fig.axes):
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            lo, hi = ("x0", "x1") if axis is ax.xaxis else ("y0", "y1")
            boxes.sort(key=lambda b: getattr(b[1], lo))
            for (a, box_a), (b, box_b) in itertools.pairwise(boxes):
                if getattr(box_b, lo) < getattr(box_a, hi) and box_a.overlaps(box_b):
                    found.append(f"axes {n} {axis.axis_name}: {a!r} overlaps {b!r}")
    return found
