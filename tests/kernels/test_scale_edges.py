"""validate_scale takes every exact real, checks the range on the user's value (not
its float32 rounding), and records when float32 rounding changed it."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fp8lab.kernels import scale as scale_mod
from fp8lab.kernels.scale import collapse_shard_scales, validate_scale


@pytest.mark.parametrize(
    "scale", [ml_dtypes.bfloat16(0.5), Fraction(1, 2), np.float16(0.5), 0.5, np.int8(1) / 2]
)
def test_exact_reals_of_any_type_are_accepted(scale: object) -> None:
    assert validate_scale(scale) == np.float32(0.5)


def test_huge_python_int_is_a_value_error_naming_the_rule() -> None:
    with pytest.raises(ValueError, match="above 2\\*\\*126"):
        validate_scale(2**200)


def test_range_is_checked_on_the_users_value_not_its_float32_rounding() -> None:
    just_above = 2.0**126 * (1 + 2.0**-40)  # float32 rounds it to exactly 2**126
    with pytest.raises(ValueError, match="above 2\\*\\*126"):
        validate_scale(just_above)
    tiny = float(np.finfo(np.float32).smallest_normal) * (1 - 2.0**-40)
    with pytest.raises(ValueError, match="below the smallest normal"):
        validate_scale(tiny)


def test_float32_rounding_is_recorded_beside_the_users_value() -> None:
    checked = scale_mod.check_scale(0.1)
    assert checked.value == np.float32(0.1) and checked.rounded
    assert checked.given == Fraction(0.1)
    record = checked.to_dict()
    assert record["given_hex"] == (0.1).hex() and record["float32_hex"] != record["given_hex"]
    assert record["rounded"] is True
    exact = scale_mod.check_scale(0.5)
    assert not exact.rounded and exact.to_dict()["rounded"] is False


@pytest.mark.parametrize("shards", [[True, 0.5], [0.5, np.True_], np.array([True, False])])
def test_collapse_refuses_bool_shards_like_validate_scale(shards: object) -> None:
    with pytest.raises(TypeError):
        collapse_shard_scales(shards)


def test_collapse_keeps_exact_shard_types() -> None:
    assert collapse_shard_scales([Fraction(1, 4), ml_dtypes.bfloat16(0.5)]) == np.float32(0.5)
