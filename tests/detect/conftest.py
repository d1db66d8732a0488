"""Scales shared by the detect tests: the seed's, edge cases and seeded random ones."""

from __future__ import annotations

import numpy as np

TABLE = {0.0092: 60, 0.13: 118, 0.77: 128, 1.0: 0, 3.0: 30}  # exposing counts, by brute force
SEED_SCALES = (1.0, 0.5, 0.035, 0.0092, 7.25, 0.13, 0.77)
EDGE_SCALES = (
    2.0**-126,  # smallest valid: every candidate x is float32-subnormal
    1.5 * 2.0**-126,
    1.7 * 2.0**125,  # m*s overflows float32 for the top midpoints
    2.0**126,
    2.0**-20,
    2.0**20,
    1.3 * 2.0**-20,
    0.77 * 2.0**20,
    0.25,
    2.0,
    29.166667938232422,  # bf16 exposes here
)
_rng = np.random.default_rng(4)
RANDOM_SCALES = tuple(float(np.float32(v)) for v in np.exp2(_rng.uniform(-20, 20, 16)))
MANY_SCALES = (*TABLE, *SEED_SCALES[1:3], SEED_SCALES[4], *EDGE_SCALES, *RANDOM_SCALES)
