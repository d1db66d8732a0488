"""torch's CPU cast to float8 is fp8lab's encoder under a named overflow and NaN policy.

Every bfloat16 bit pattern (widened exactly to float32) and a range of float32
NaN payloads. e4m3fn: saturating (an overflow or an infinity becomes ±448),
``keep-sign``. e5m2: not saturating (to ±inf), ``keep-sign-all-ones`` (torch
sets every magnitude bit of an e5m2 NaN and keeps its sign). Skipped, with the
reason, without the optional torch extra.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.specs.formats import FORMATS
from tests.conftest import LazyModule, needs

torch = LazyModule("torch")
pytestmark = needs("torch", extra="torch")

DTYPES = {  # torch's dtype (named: torch is imported by the first test), saturate, NaN policy
    "e4m3fn": ("float8_e4m3fn", True, "keep-sign"),
    "e5m2": ("float8_e5m2", False, "keep-sign-all-ones"),
}


@pytest.mark.parametrize("fmt", sorted(DTYPES))
def test_torchs_cast_is_the_encoder_under_its_nan_policy(fmt: str) -> None:
    name, saturate, nan = DTYPES[fmt]
    dtype = getattr(torch, name)
    widened = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    payloads = np.arange(0x7F800001, 0x7F800001 + 4096, dtype=np.uint32)
    nans = np.concatenate([payloads, payloads | 0x8000_0000]).view(np.float32)
    x = np.concatenate([widened, nans])
    got = torch.from_numpy(x).to(dtype).view(torch.uint8).numpy()
    want = encode(x, FORMATS[fmt], saturate=saturate, nan=nan)
    wrong = np.flatnonzero(got != want)
    assert wrong.size == 0, [(hex(x.view(np.uint32)[i]), got[i], want[i]) for i in wrong[:5]]


def test_under_the_canonical_policy_e5m2_nan_differs() -> None:
    """The check goes red on the wrong policy: every NaN input differs."""
    x = np.array([np.nan, -np.nan, 1.0], np.float32)
    got = torch.from_numpy(x).to(torch.float8_e5m2).view(torch.uint8).numpy()
    want = encode(x, FORMATS["e5m2"], saturate=False, nan="canonical")
    assert (got != want).tolist() == [True, True, False]
