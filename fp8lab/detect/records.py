"""Exposure records: which float32 inputs make two kernels emit different bytes.

Each exposing input is classified with the arithmetic model of the pair
(d = fl(x/s), q = fl(x*fl(1/s)), :mod:`fp8lab.detect.windows`): which result
sits exactly on the midpoint between them, and the range of that midpoint
(:data:`fp8lab.detect.midpoints.RANGES`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.detect.midpoints import MidpointTable

__all__ = ["ON_MIDPOINT", "ExposedInput", "ExposureRecord", "classify_inputs"]

ON_MIDPOINT = ("divide", "reciprocal", "both", "neither", "no-midpoint")


@dataclass(frozen=True)
class ExposedInput:
    """One exposing input and its class."""

    input: str
    on_midpoint: str
    range: str
    midpoint: str


@dataclass(frozen=True)
class ExposureRecord:
    """The exposing inputs of a kernel pair at one scale over a pattern range.

    Args:
        method: ``"brute"`` or ``"enumerate"``.
        a: the reference kernel's name.
        b: the other kernel's name.
        format: format name.
        scale: the float32 scale as a float.
        scale_hex: ``float.hex`` of it.
        start: first pattern examined.
        stop: one past the last pattern.
        examined: inputs evaluated with both kernels.
        count: exposing inputs.
        inputs: exposing inputs as ``0x%08x`` bit patterns, ascending.
        classes: one :class:`ExposedInput` per input.
        wall_seconds: time taken.
        complete: True when ``inputs`` is proven to hold every exposing input in
            ``[start, stop)``: brute force always; enumeration only for the
            built-in reciprocal / divide pair (:mod:`fp8lab.detect.windows`).
        covered: brute force only: the pattern ranges its returned chunks
            examined, merged (:func:`fp8lab.sweeps.coverage.covered_ranges`).
    """

    method: str
    a: str
    b: str
    format: str
    scale: float
    scale_hex: str
    start: int
    stop: int
    examined: int
    count: int
    inputs: tuple[str, ...]
    classes: tuple[ExposedInput, ...]
    wall_seconds: float
    complete: bool
    covered: list[list[str]] | None = None

    def by_class(self) -> dict[str, int]:
        """Counts per ``on_midpoint/range`` class."""
        out: dict[str, int] = {}
        for c in self.classes:
            key = f"{c.on_midpoint}/{c.range}"
            out[key] = out.get(key, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def classify_inputs(
    bits: npt.NDArray[np.uint32], scale: np.float32, table: MidpointTable
) -> tuple[ExposedInput, ...]:
    """Classify exposing inputs by the pair's arithmetic model.

    Args:
        bits: float32 bit patterns.
        scale: the float32 scale.
        table: midpoints of the format.
    """
    x = np.asarray(bits, np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.abs(x / scale)
        q = np.abs(x * (np.float32(1.0) / scale))
    mids = table.values.astype(np.float32)
    lo, hi = np.minimum(d, q), np.maximum(d, q)
    k = np.minimum(np.searchsorted(mids, lo, side="left"), mids.size - 1)
    m = mids[k]
    within = (lo <= m) & (m <= hi)  # False where either side is NaN
    on_d, on_q = d == m, q == m
    # (on d, on q): (True, False) 0, (False, True) 1, (True, True) 2, (False, False) 3
    label = np.where(on_d, np.where(on_q, 2, 0), np.where(on_q, 1, 3))
    label = np.where(within, label, 4)
    return tuple(
        ExposedInput(f"0x{b:08x}", ON_MIDPOINT[lab], table.ranges[i], v.hex())
        if lab != 4
        else ExposedInput(f"0x{b:08x}", ON_MIDPOINT[4], "", "")
        for b, lab, i, v in zip(
            np.asarray(bits, np.uint32).tolist(),
            label.tolist(),
            k.tolist(),
            m.tolist(),
            strict=True,
        )
    )
