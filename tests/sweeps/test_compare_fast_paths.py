"""The comparison's whole-array shortcuts equal the element-by-element rules they replace."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS
from fp8lab.sweeps.chunk_compare import _any_differ
from fp8lab.sweeps.mismatch_classes import (
    _midpoints,
    classify_mismatches,
    is_midpoint,
    nan_code_lut,
    nan_code_mask,
)

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


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_is_midpoint_is_membership_of_the_midpoints(fmt: str) -> None:
    """The binary search equals set membership on every midpoint, its float32 neighbours,
    the specials and seeded random patterns; a planted off-by-one in the search is caught."""
    spec = FORMATS[fmt]
    mids = _midpoints(spec)
    near = mids.astype(np.float32)
    rng = np.random.default_rng(20261207)
    patterns = rng.integers(0, 1 << 32, 1 << 14, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        drawn = np.abs(patterns.view(np.float32).astype(np.float64))
    values = np.concatenate(
        [
            mids,
            np.nextafter(near, np.float32(np.inf)).astype(np.float64),
            np.nextafter(near, np.float32(0)).astype(np.float64),
            [0.0, np.inf, np.nan, float(spec.max), float(spec.smallest_normal)],
            drawn,
        ]
    )
    member = {float(m) for m in mids}
    want = [v in member for v in values.tolist()]
    assert is_midpoint(values, spec).tolist() == want
    assert sum(want) >= mids.size
    shifted = mids[np.minimum(np.searchsorted(mids, values) + 1, mids.size - 1)] == values
    assert shifted.tolist() != want  # the planted defect: the search's neighbour


def _classes_all_at_once(
    x: np.ndarray, a: np.ndarray, b: np.ndarray, spec: FormatSpec
) -> np.ndarray:
    """Every class's test by ``np.isin`` on every element, the first match winning: the twin."""
    with np.errstate(invalid="ignore"):
        wide = np.abs(x.astype(np.float64))
    lut = nan_code_lut(spec)
    rules = (
        lut[a] & lut[b],
        np.isnan(wide),
        np.isinf(wide),
        wide > float(spec.max),
        np.isin(wide, _midpoints(spec)),
        wide < float(spec.smallest_normal),
    )
    out = np.full(x.shape, len(rules), np.int8)
    for i in reversed(range(len(rules))):
        out[rules[i]] = i
    return out


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_classes_equal_every_test_with_np_isin(fmt: str) -> None:
    spec = FORMATS[fmt]
    rng = np.random.default_rng(20261207)
    mids = _midpoints(spec).astype(np.float32)
    special = np.array([0.0, np.inf, -np.inf, np.nan, spec.max, spec.smallest_normal], np.float32)
    drawn = rng.integers(0, 1 << 32, 1 << 15, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([drawn, mids, -mids, np.nextafter(mids, np.float32(0)), special])
    a = rng.integers(0, 256, x.size, dtype=np.uint8)
    b = rng.integers(0, 256, x.size, dtype=np.uint8)
    got = classify_mismatches(x, a, b, spec)
    assert np.array_equal(got, _classes_all_at_once(x, a, b, spec))
    assert set(np.unique(got).tolist()) >= {1, 2, 4, 6}  # NaN, inf, tie and other all met
    even = x.size // 2 * 2  # the same classes in a two-row shape
    two_rows = [v[:even].reshape(2, -1) for v in (x, a, b)]
    assert np.array_equal(classify_mismatches(*two_rows, spec), got[:even].reshape(2, -1))
    planted = _classes_all_at_once(x, a, b, spec)
    planted[planted == 4] = 6  # the planted defect: ties classed as other
    assert not np.array_equal(got, planted)
