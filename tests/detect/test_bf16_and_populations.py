from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fp8lab.detect import (
    all_bf16_exposing,
    bf16_exposing,
    draw_probability,
    log_scales,
    random_draw_check,
    seed_scores,
    tie_population,
)
from fp8lab.detect.pair import resolve_kernel
from fp8lab.detect.sweep import sweep_batch

from .conftest import SEED_SCALES

BF16_SCALES = {  # found by the 10**5-scale sweep
    "0x1.84924a0000000p-17": 2,
    "0x1.d2aaac0000000p+4": 2,
    "0x1.4e38e40000000p+6": 30,
    "0x1.8c631a0000000p+16": 28,
}


@pytest.mark.parametrize("scale", [*SEED_SCALES, 3.0])
def test_bf16_exposes_nothing_at_the_seed_scales(scale: float) -> None:
    assert bf16_exposing(scale).size == 0 == all_bf16_exposing(scale).size


@pytest.mark.parametrize(("hex_scale", "count"), BF16_SCALES.items())
def test_bf16_exposure_where_the_sweep_found_it(hex_scale: str, count: int) -> None:
    s = float.fromhex(hex_scale)
    assert np.array_equal(bf16_exposing(s), all_bf16_exposing(s))
    assert bf16_exposing(s).size == count


@pytest.mark.parametrize(
    ("scale", "exposing", "found"), [(0.0092, 60, 24), (0.13, 118, 78), (0.77, 128, 82)]
)
def test_seed_words_find_what_the_seed_reported(scale: float, exposing: int, found: int) -> None:
    (score,) = seed_scores([scale])
    assert (score.exposing, score.seed_found, score.seed_missed) == (
        exposing,
        found,
        exposing - found,
    )
    assert score.seed_words == 209


def test_tie_population_exposes_all_and_controls_none() -> None:
    pop = tie_population(0.77)
    a, b = resolve_kernel("reciprocal"), resolve_kernel("divide")
    assert pop.exposing.size == 128 and pop.controls.size > 0
    assert (a.quantize(pop.exposing, 0.77) != b.quantize(pop.exposing, 0.77)).all()
    assert (a.quantize(pop.controls, 0.77) == b.quantize(pop.controls, 0.77)).all()
    assert pop.words.size == pop.exposing.size + pop.controls.size


def test_numpy_uniform_draws_sit_on_the_2_to_51_grid() -> None:
    v = np.random.default_rng(3).uniform(-2.0, 2.0, 10_000)
    k = (v + 2.0) * 2.0**51
    assert np.array_equal(k, np.floor(k))


def test_draw_probability_of_one() -> None:
    # 1.0 is even: [1 - 2**-25, 1 + 2**-24] closed, grid step 2**-51.
    assert draw_probability([0x3F800000]) == Fraction(3 * 2**26 + 1, 2**53)
    # 1 + 2**-23 is odd: the open interval of width 2**-23 holds 2**28 - 1 grid points.
    assert draw_probability([0x3F800001]) == Fraction(2**28 - 1, 2**53)
    with pytest.raises(ValueError, match="power of two"):
        draw_probability([0x3F800000], 3.0)


def test_random_words_expose_nothing_and_that_is_likely() -> None:
    check = random_draw_check(seed=1234)
    assert len(check.scales) == 14 and check.n == 20000
    assert check.hits == (0,) * 14
    assert 0.9 < check.p_none_reused < 1.0
    assert check.p_union > max(check.p_per_draw) > 0


def test_bf16_candidates_equal_all_bf16_over_a_grid() -> None:
    scales = log_scales(120)
    counts = sweep_batch(scales)["bf16_count"]
    for s, n in zip(scales, counts, strict=True):
        assert all_bf16_exposing(float(s)).size == n
