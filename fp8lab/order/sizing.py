"""Probe values sized for the kernel's output type: masks it can hold and counts it can say.

An FPRev probe reads a count of units from one output, so the output type
must hold the count exactly and the mask must fit the kernel's arithmetic:

* float32 out: the masks and units of :mod:`fp8lab.order.probe`, every
  other summand one unit (one call per question).
* bfloat16 out (8 significant bits): a count is exact up to 256, so a
  question is asked in calls of at most 256 units each (the other summands
  0), and the counts are added.
* float16 out (11 bits, largest 65504): fp8 masks 240·240 = 57600 and
  float32 masks 2**15, units 2**-18 (fp8) and 2**-20 (float32), at most 512
  and 2048 units a call: a float32 accumulator holding the mask still drops
  every partial of that many units (half an ulp of the mask), and the count
  times the unit is a float16 value.

Every partial of units then stays exact in an accumulator of the output
type too, so a kernel that rounds every add to bfloat16 or float16 is probed
alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["FP8_SIZES", "F32_SIZES", "OUTS", "ProbeSize", "unit_chunks"]

OUTS = ("f32", "bf16", "f16")


@dataclass(frozen=True)
class ProbeSize:
    """What one output type needs of a probe.

    Attributes:
        mask: the mask (an e4m3fn value for the fp8 probe: both operands hold
            it, so the summand is its square; a float32 value otherwise).
        unit: one unit's summand (2**-18 on fp8 codes: the smallest
            subnormal squared).
        cap: units per call, or None for every other summand at once.

    The sibling test's values are sized by the probe itself (``high_exp``,
    ``low_exp``: 2**14 and up for float16 out).
    """

    mask: float
    unit: float
    cap: int | None


FP8_SIZES = {
    "f32": ProbeSize(448.0, 2.0**-18, None),
    "bf16": ProbeSize(448.0, 2.0**-18, 256),
    "f16": ProbeSize(240.0, 2.0**-18, 512),
}
F32_SIZES = {
    "f32": ProbeSize(2.0**127, 1.0, None),
    "bf16": ProbeSize(2.0**127, 1.0, 256),
    "f16": ProbeSize(2.0**15, 2.0**-20, 2048),
}


def unit_chunks(k: int, i: int, j: int, cap: int | None) -> list[npt.NDArray[np.int64]]:
    """The summands other than i and j, ascending, in runs of at most ``cap`` (one run: None)."""
    rest = np.delete(np.arange(k, dtype=np.int64), [i, j])
    if cap is None or rest.size <= cap:
        return [rest]
    return [rest[s : s + cap] for s in range(0, rest.size, cap)]
