"""The ``quotient`` axis has no mutant because it moves nothing: proved on every amax pattern.

For every bound a rule divides by or into (:func:`quotient_bounds`), the
float32 quotient and the float64 one rounded to float32 are the same float32
on all 2^31 non-negative float32 amax patterns, for the divisor ``amax / M``
and the multiplier ``M / amax`` alike (docs/mutation.md). The compiled sweep is
checked against its numpy twin, and shown to see a planted difference.
"""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.specs.scale_rules import RULES, Quotient
from fp8lab.sweeps import quotient
from fp8lab.sweeps.quotient import (
    ALL_POSITIVE,
    FORMS,
    quotient_bounds,
    quotient_splits,
    quotient_splits_numpy,
)

# the float32 patterns where each twin is checked: 0, the subnormals' top, [1, 2) in part,
# the largest finite values up into inf and the NaNs
RANGES = (
    (0, 1 << 16),
    (0x007F_0000, 0x0081_0000),
    (0x3F80_0000, 0x3F82_0000),
    (0x7F7F_0000, 0x7F81_0000),
)


def test_the_bounds_are_every_rules_element_max() -> None:
    assert quotient_bounds() == (6.0, 448.0, 2688.0)
    assert any(r.quotient is Quotient.FLOAT64 for r in RULES.values())  # the axis is in use


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bound", quotient_bounds())
def test_the_compiled_sweep_agrees_with_its_numpy_twin(bound: float, form: str) -> None:
    for lo, hi in RANGES:
        assert quotient_splits(bound, form, lo, hi) == quotient_splits_numpy(bound, form, lo, hi)


def test_the_sweep_sees_a_planted_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound that is no float32 (1/3, rounded differently in float32 and float64) splits."""
    third = 1.0 / 3.0
    window = (0x3F80_0000, 0x3F81_0000)
    count, first = quotient_splits_numpy(third, "divisor", *window)
    assert count > 0 and first >= 0x3F80_0000
    with pytest.raises(ValueError, match="not a float32"):
        quotient_splits(third, "divisor", 0, 1)
    with pytest.raises(ValueError, match="unknown form"):
        quotient_splits(448.0, "product", 0, 1)
    with pytest.raises(ValueError, match="outside"):
        quotient_splits(448.0, "divisor", 0, ALL_POSITIVE + 1)
    for form in FORMS:  # the compiled loop sees the same splits when given the two bounds
        rows = quotient._splits(np.float32(third), third, form == "multiplier", *window)
        numpy_twin = quotient_splits_numpy(third, form, *window)
        assert numpy_twin[0] > 0 and (int(rows[:, 0].sum()), int(rows[0, 1])) == numpy_twin
    monkeypatch.setattr(quotient, "_splits", lambda *a: np.array([[2, 9], [1, 5]], np.int64))
    assert quotient_splits(448.0, "divisor") == (3, 5)


@pytest.mark.slow  # all 2^31 patterns each: 4-7 s apiece on two shared cores
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bound", quotient_bounds())
def test_float64_and_float32_quotients_agree_on_every_amax(bound: float, form: str) -> None:
    assert quotient_splits(bound, form) == (0, -1)
