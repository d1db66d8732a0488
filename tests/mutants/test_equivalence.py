"""The equivalence re-check: probes, the exhaustive sweep, and what each re-check records."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.mutants import equivalence_sweep
from fp8lab.mutants.equivalence import recheck_equivalents
from fp8lab.mutants.probes import chunk_order, encoder_probes
from fp8lab.mutants.runner import Equivalent, load_equivalents

_HIDDEN = 0x3F00_1235  # 0.5 plus 0x1235 ulps: no probe lands on it


@pytest.mark.slow
def test_every_justified_entry_passes_the_probe_screen_and_says_it_is_a_screen() -> None:
    checks = recheck_equivalents(load_equivalents(), exhaustive=False)
    assert all(c.equivalent for c in checks.values()), [c for c in checks.values()]
    assert all("no proof" in c.means and c.examined > 100_000 for c in checks.values())


def test_a_stale_entry_is_rejected_not_raised() -> None:
    key = "fp8lab.kernels.f32tofp8:swap_strict_compare:2"
    stale = Equivalent(key, "a >= 1", "a > 1", "old text")
    (check,) = recheck_equivalents({key: stale}, exhaustive=False).values()
    assert not check.equivalent and "stale" in check.detail


def test_the_sweep_finds_a_difference_the_probes_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _HIDDEN not in encoder_probes().view(np.uint32)

    def good(x: np.ndarray) -> np.ndarray:
        return np.zeros(x.shape, np.uint8)

    def bad(x: np.ndarray) -> np.ndarray:
        return (x.view(np.uint32) == _HIDDEN).astype(np.uint8)

    class K:
        def __init__(self, f: object) -> None:
            self.name, self.encoder = "k", f

    monkeypatch.setattr(equivalence_sweep, "_pair", lambda key: ({"k": K(good)}, {"k": K(bad)}))
    target = equivalence_sweep._Target("m:op:0", "k", "encoder", 1.0)
    miss, probed = equivalence_sweep._probe(target)
    assert miss == "" and probed == encoder_probes().size
    examined = {"m:op:0": 0}
    found = equivalence_sweep._sweep([target], 1, None, examined)
    assert "0x3f001235" in found[target]
    assert 0 < examined["m:op:0"] < 1 << 32  # it stopped early


def test_chunk_order_covers_every_pattern_once_nearest_the_range_first() -> None:
    bounds = chunk_order(1 << 22)
    assert sorted(bounds) == [(lo, lo + (1 << 22)) for lo in range(0, 1 << 32, 1 << 22)]
    first = np.array([bounds[0][0]], np.uint32).view(np.float32)[0]
    assert 2.0**-10 < abs(first) < 448.0
