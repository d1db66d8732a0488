"""The bit-field engine's boundary comparison goes red on planted defects."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from fp8lab.codecs import ENGINES, rne_bits
from fp8lab.codecs.rne_bits import BitsParams
from fp8lab.specs.formats import FORMATS
from tests.codecs.bits_probes import mismatches

pytestmark = pytest.mark.skipif("bits" not in ENGINES, reason="the bits engine needs numba")


@numba.njit(inline="always")
def _ties_away(sig: int, shift: int) -> int:
    half = rne_bits._shl(np.int32(1), np.int32(shift - np.int32(1)))
    return rne_bits._shr(np.int32(sig + half), shift)


def _compiled(params: BitsParams) -> numba.core.dispatcher.Dispatcher:
    return numba.njit(nogil=True, boundscheck=False)(rne_bits._make_kernel(params))


def _run(defect: str, bits: np.ndarray, params: BitsParams) -> np.ndarray:
    if defect == "mask off by one":  # the overflow threshold one code low
        params = params._replace(max_code=params.max_code - 1)
    elif defect == "wrong minexp":  # the subnormal binade one exponent off
        params = params._replace(minexp=params.minexp + 1)
    out = np.empty(bits.size, np.uint8)
    _compiled(params)(bits.view(np.int32), out)
    return out


@pytest.mark.parametrize("fmt_name", ["e4m3fn", "e5m2"])
@pytest.mark.parametrize("defect", ["ties away", "mask off by one", "wrong minexp"])
def test_planted_defect_goes_red(
    fmt_name: str, defect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if defect == "ties away":
        monkeypatch.setattr(rne_bits, "_round_step", _ties_away)
    # one policy shows each defect (each policy is a compile): a threshold one code low
    # only where overflow is not the max code itself, without saturation
    saturating = defect != "mask off by one"
    found = mismatches(FORMATS[fmt_name], lambda b, p: _run(defect, b, p), 1, saturating)
    assert found, defect


def test_unplanted_rebuild_stays_green() -> None:
    # every policy of the real kernel: tests/codecs/test_rne_bits.py (compiled once, cached)
    assert mismatches(FORMATS["e4m3fn"], lambda b, p: _run("none", b, p), first=2) == []
