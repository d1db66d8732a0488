"""The rounding midpoints of a format and the tie rule at each (OFP8 §4.2).

Under saturating RNE the code of a value is constant between consecutive
midpoints ``m_i = (v_i + v_{i+1}) / 2`` of the magnitudes ``v_0 = 0 .. v_max``
and the overflow candidate ``v_{max+1}``. At ``m_i`` itself RNE picks the
neighbour with an even significand, i.e. the even linear index. The top
midpoint (464 in e4m3fn) separates ``max`` from the overflow candidate, which
saturates back to ``max``: no byte changes there under saturation.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format

__all__ = ["RANGES", "MidpointTable", "midpoint_table"]

RANGES = ("subnormal", "normal", "saturation-boundary")


@dataclass(frozen=True, eq=False)
class MidpointTable:
    """Positive midpoints of one format, exact in float64 and in float32.

    Args:
        fmt: format name.
        values: ``m_i`` for i = 0 .. max_code (float64, exact).
        tie_up: whether RNE sends exactly ``m_i`` to ``v_{i+1}``.
        exposable: whether the two sides of ``m_i`` encode differently (saturating).
        ranges: one of :data:`RANGES` per midpoint.
    """

    fmt: str
    values: npt.NDArray[np.float64]
    tie_up: npt.NDArray[np.bool_]
    exposable: npt.NDArray[np.bool_]
    ranges: tuple[str, ...]

    def __post_init__(self) -> None:
        for a in (self.values, self.tie_up, self.exposable):
            a.setflags(write=False)

    def __len__(self) -> int:
        return int(self.values.size)


def _range(spec: FormatSpec, i: int) -> str:
    if i == spec.max_code:
        return RANGES[2]
    return RANGES[0] if spec.magnitude_value(i + 1) <= spec.smallest_normal else RANGES[1]


@cache
def midpoint_table(fmt: str | FormatSpec = "e4m3fn") -> MidpointTable:
    """The midpoint table of ``fmt``, built from its fields.

    Raises:
        ValueError: for an unknown format, or midpoints not exact in float32.
    """
    spec = get_format(fmt)
    mags = [spec.magnitude_value(i) for i in range(spec.max_code + 2)]
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(mags)]
    values = np.array([float(m) for m in mids], np.float64)
    if any(float(np.float32(v)) != m for v, m in zip(values, mids, strict=True)):
        raise ValueError(f"{spec.name}: a midpoint is not exact in float32")
    n = len(mids)
    tie_up = np.array([(i + 1) % 2 == 0 for i in range(n)], np.bool_)
    # Saturating: the overflow candidate v_{max+1} encodes as max, like v_max.
    exposable = np.array([i < spec.max_code for i in range(n)], np.bool_)
    return MidpointTable(
        spec.name, values, tie_up, exposable, tuple(_range(spec, i) for i in range(n))
    )
