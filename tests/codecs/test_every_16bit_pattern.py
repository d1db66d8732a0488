"""Every bfloat16 and every float16 bit pattern through all three methods, against the scan.

The scalar twin memoises its exact part per distinct value, so the four policies
cost one exact pass per format and dtype.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.codecs import METHODS, encode
from fp8lab.refs import scan_encode
from fp8lab.specs.format import FormatSpec
from tests.conftest import CODEC_POLICIES, scan_policy

POLICIES = CODEC_POLICIES
DTYPES = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_every_16bit_pattern_matches_scan_with_every_method(fmt: FormatSpec, dtype: str) -> None:
    x = np.arange(1 << 16, dtype=np.uint16).view(DTYPES[dtype])
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        wide = x.astype(np.float32)
        back = wide.astype(DTYPES[dtype]).view(np.uint16)
    number = ~np.isnan(wide)  # NaN payloads may be quieted; NaN stays NaN
    assert np.array_equal(back[number], x.view(np.uint16)[number])  # the widening is exact
    for saturate, nan in POLICIES:
        want = scan_encode(wide, fmt, scan_policy(saturate, nan))
        for method in METHODS:
            got = encode(x, fmt, saturate=saturate, nan=nan, method=method)
            assert np.array_equal(got, want), (method, dtype, saturate, nan)
