"""What a sweep shows: the structure of divide-vs-reciprocal exposure over scales.

Facts measured on 10**5 log-spaced scales in [2**-20, 2**20] (e4m3fn) and
recomputed by :func:`describe_sweep` for any sweep:

* Binade invariance: multiplying s by 2**k multiplies every candidate x, x/s
  and x*r by powers of two exactly, so the exposing set just scales with it
  while x and m*s stay float32-normal and finite (measured: identical counts
  for 2**-116 <= s < 2**118 or so). The count is a function of the
  significand of s; a log-spaced grid over [2**-20, 2**20] samples that one
  function 40 times over (s = 0.77 and 0.77 * 2**20 both expose 128).
* A power of two has an exact float32 reciprocal, so x*r = x/s before rounding
  and nothing is exposed. No other scale has an exact reciprocal (1/a is not
  dyadic for odd a > 1); 12% of the 10**5 grid scales still expose nothing
  (7.25 among them).
* Every exposing input has exactly one path exactly on a midpoint: the two
  results are never both on it, and never straddle it strictly. Ties are the
  whole story; the tie and ladder words are the right population. Each
  exposed midpoint has exactly one exposing input per sign.
* Exposure grows with the reciprocal's rounding error e = (fl(1/s)*s - 1)*2**24
  (|e| <= 1): the count correlates with |e| (0.81), 76% of scales with
  |e| <= 0.05 expose nothing, and scales with |e| > 0.5 average 117 (max 252).
* The two directions (x/s on the midpoint, x*r on it) are about equally common
  (3260828 and 3277034 inputs over the grid).
* bf16 inputs expose at 5 grid scales (64 inputs), see :mod:`fp8lab.detect.bf16`.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from fp8lab.detect.sweep import SweepRecord

__all__ = ["describe_sweep"]

_BINS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)


def describe_sweep(record: SweepRecord) -> dict[str, Any]:
    """Summary facts of a sweep, JSON-ready, with a one-paragraph text.

    Raises:
        ValueError: for a sweep of no scales.
    """
    c, e, s = record.columns, record.reciprocal_error, record.scales.astype(np.float64)
    n = int(s.size)
    if n == 0:
        raise ValueError("a sweep over no scales has no structure to describe")
    count = c["count"]
    pow2 = np.frexp(s)[0] == 0.5
    exact = e == 0
    bins = []
    for lo, hi in itertools.pairwise(_BINS):
        m = (np.abs(e) > lo) & (np.abs(e) <= hi)
        if m.any():
            bins.append(
                {
                    "abs_error_ulps": [lo, hi],
                    "scales": int(m.sum()),
                    "mean_count": float(count[m].mean()),
                    "zero_fraction": float((count[m] == 0).mean()),
                }
            )
    corr = float(np.corrcoef(np.abs(e), count)[0, 1]) if n > 1 and count.std() > 0 else 0.0
    bf16_scales = [float(v).hex() for v in record.scales[c["bf16_count"] > 0]]
    facts = {
        "scales": n,
        "zero_scales": int((count == 0).sum()),
        "max_count": int(count.max()),
        "mean_count": float(count.mean()),
        "powers_of_two": int(pow2.sum()),
        "powers_of_two_exposing": int((count[pow2] > 0).sum()),
        "exact_reciprocals": int(exact.sum()),
        "exact_reciprocals_exposing": int((count[exact] > 0).sum()),
        "both_on_midpoint": int(c["both_on"].sum()),
        "strictly_straddling": int(c["neither_on"].sum()),
        "one_input_per_midpoint": bool((count == c["midpoints"]).all()),
        "divide_on_midpoint": int(c["divide_on"].sum()),
        "reciprocal_on_midpoint": int(c["reciprocal_on"].sum()),
        "corr_count_abs_error": corr,
        "by_abs_error": bins,
        "bf16_exposing_scales": bf16_scales,
        "bf16_exposing_inputs": int(c["bf16_count"].sum()),
    }
    facts["text"] = (
        f"{n} scales: {facts['zero_scales']} expose nothing, mean {facts['mean_count']:.1f}, "
        f"max {facts['max_count']}. Powers of two: {facts['powers_of_two']} swept, "
        f"{facts['powers_of_two_exposing']} exposing; exact reciprocals "
        f"{facts['exact_reciprocals']}, {facts['exact_reciprocals_exposing']} exposing. "
        f"Exposing inputs with x/s on the midpoint {facts['divide_on_midpoint']}, with x*r on "
        f"it {facts['reciprocal_on_midpoint']}, both {facts['both_on_midpoint']}, strictly "
        f"straddling {facts['strictly_straddling']}. Count vs |fl(1/s)*s - 1| correlation "
        f"{corr:.2f}. bf16 inputs expose at {len(bf16_scales)} scales "
        f"({facts['bf16_exposing_inputs']} inputs)."
    )
    return facts
