from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from fp8lab.evidence.figures import figure_svg
from fp8lab.evidence.sidecar import from_hex_floats, to_hex_floats, write_sidecar
from fp8lab.gates import GateStatus


def test_floats_round_trip_exactly_through_hex(tmp_path: Path) -> None:
    values = [0.1, np.float32(0.0092).item(), -0.0, 5e-324, 448.0, math.nan, math.inf]
    path = write_sidecar(
        tmp_path,
        "t",
        {"v": values, "s": GateStatus.PASS, "n": np.int64(3), "a": np.array([0.5, 1.5])},
    )
    data = json.loads(path.read_text())
    back = [from_hex_floats(t) for t in data["v"]]
    assert [v.hex() for v in back[:-2]] == [float(v).hex() for v in values[:-2]]
    assert math.copysign(1.0, back[2]) == -1.0
    assert math.isnan(back[5]) and back[6] == math.inf
    assert (
        data["s"] == "PASS"
        and data["n"] == 3
        and data["a"] == ["0x1.0000000000000p-1", "0x1.8000000000000p+0"]
    )
    with pytest.raises(FileExistsError):
        write_sidecar(tmp_path, "t", {})
    with pytest.raises(TypeError, match="sidecar"):
        to_hex_floats(object())


def test_figures_are_deterministic_svg() -> None:
    def draw() -> Figure:
        fig = Figure()
        fig.add_subplot().plot([0, 1, 2], [1, 0, 1])
        return fig

    first, second = figure_svg(draw()), figure_svg(draw())
    assert first == second and first.startswith(b"<?xml")
    assert b"<dc:date>" not in first
