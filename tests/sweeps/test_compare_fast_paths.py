"""The comparison's whole-array shortcuts equal the element-by-element rules they replace."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.specs.formats import FORMATS
from fp8lab.sweeps.chunk_compare import _any_differ
from fp8lab.sweeps.mismatch_classes import nan_code_lut, nan_code_mask

EVERY_CODE = np.arange(256, dtype=np.uint8)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_nan_code_mask_is_the_lookup_table_on_every_code(fmt: str) -> None:
    spec = FORMATS[fmt]
    mask = nan_code_mask(EVERY_CODE, spec)
    assert mask.dtype == np.bool_ and mask.tolist() == nan_code_lut(spec).tolist()
    assert mask.tolist() == [spec.is_nan_code(c) for c in range(256)]


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 64, 1000, 1 << 12])
def test_any_differ_finds_one_planted_difference_anywhere(size: int) -> None:
    rng = np.random.default_rng(20261204)
    a = rng.integers(0, 256, size, dtype=np.uint8)
    assert not _any_differ(a, a.copy())
    for at in {0, size // 2, size - 1} if size else set():
        b = a.copy()
        b[at] ^= np.uint8(1 << int(rng.integers(0, 8)))
        assert _any_differ(a, b) and _any_differ(b, a)
    if size > 1:  # a strided view takes the element-wise path
        b = a.copy()
        b[-1] ^= np.uint8(0x80)
        assert _any_differ(a[::-1], b[::-1]) and not _any_differ(a[:-1][::-1], b[:-1][::-1])
