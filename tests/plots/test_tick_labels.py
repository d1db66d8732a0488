"""The atlas figures' tick labels do not overlap."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from fp8lab.plots import plot_codes
from fp8lab.specs.formats import FP8_FORMATS
from fp8lab.studies.atlas import code_table
from tests.plots.overlap import overlapping_ticks


@pytest.mark.parametrize("name", list(FP8_FORMATS))
def test_every_code_plot_has_readable_ticks(name: str) -> None:
    assert overlapping_ticks(plot_codes(name, code_table(FP8_FORMATS[name]))) == []


def test_the_overlap_check_goes_red_on_crowded_ticks() -> None:
    """The meta test: 40 long labels on a short axis must be found overlapping."""
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_yticks(range(40), labels=[f"label {i:,}" for i in range(40)])
    assert overlapping_ticks(fig)
    ax.set_yticks([0, 39], labels=["low", "high"])
    assert overlapping_ticks(fig) == []
