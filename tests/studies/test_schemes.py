"""The quant_schemes notebook's helpers: GQ on the ports, sweeps, FLOOR/RCEIL, margins."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.gates import GateStatus
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES
from fp8lab.studies import schemes as study
from fp8lab.studies.schemes import (
    PUBLISHED_SWEEPS,
    floor_rceil_binades,
    floor_rceil_bytes,
    gq_on_ports,
    population_splits,
    scheme_of,
    sweep_rows,
)
from fp8lab.sweeps.amax import PAIRS, sweep_pair
from fp8lab.sweeps.range_run import RangeRun
from tests.gates.test_gq import SCHEME_OF
from tests.sweeps.test_amax import PUBLISHED


def test_scheme_of_every_rule_and_a_rule_no_scheme_describes() -> None:
    assert {name: scheme_of(name) for name in RULES} == SCHEME_OF
    with pytest.raises(ValueError, match="no GQ scheme describes"):
        scheme_of(dataclasses.replace(RULES["vllm-per-group"], block=64))


def test_gq_on_ports_runs_each_rule_under_its_own_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = {n: RULES[n] for n in ("vllm-per-token", "rceil")}  # each port: tests/gates/test_gq.py
    monkeypatch.setattr(study, "RULES", chosen)
    results = gq_on_ports(seed=1)
    assert [r.rule for r in results] == list(chosen)
    assert all(r.status is GateStatus.PASS and r.words > 10_000 for r in results)
    assert [r.scheme for r in results] == ["per-token", "mxfp8"]
    assert [r.kernel for r in results] == ["port:vllm-per-token", "port:rceil"]


def test_the_published_counts_are_the_sweep_tests_counts() -> None:
    assert PUBLISHED_SWEEPS == PUBLISHED


def test_sweep_rows_over_a_window_name_their_command_and_no_published_count() -> None:
    rows = sweep_rows(0x3F80_0000, 0x3F80_0000 + (1 << 22))
    assert [(r.pair, r.s_enc) for r in rows] == [
        (PAIRS[0], None),
        (PAIRS[1], None),
        (PAIRS[2], None),
        *((pair, s) for pair in PAIRS[3:] for s in (1.0, 2688.0)),
    ]
    assert all(r.examined == 1 << 22 and r.published_differ is None for r in rows)
    assert all(r.command == f"python -m fp8lab.sweeps.amax {r.pair}" for r in rows)
    # [1, 1.5): FLOOR and RCEIL agree below 1.75
    assert rows[0].differ == 0 and rows[0].first_differ == "-"


def test_floor_rceil_bytes_split_above_448_and_match_the_exact_reference() -> None:
    just_above = np.nextafter(np.float32(448), np.float32(1e9))
    amax = np.array(
        [448, just_above, 1.0, 1.75, np.nextafter(np.float32(1.75), 2), 2**-130], np.float32
    )
    floor, rceil = floor_rceil_bytes(amax)
    assert floor.tolist()[:2] == [127, 127] and rceil.tolist()[:2] == [127, 128]
    assert (floor != rceil).tolist() == [False, True, False, False, True, False]
    for i, a in enumerate(amax):
        block = np.zeros((1, 32), np.float32)
        block[0, 0] = a
        assert reference_scheme_quant(block, RULES["ocp-floor"])[1].tolist() == [[floor[i]]]
        assert reference_scheme_quant(block, RULES["rceil"])[1].tolist() == [[rceil[i]]]


@pytest.mark.slow
def test_floor_rceil_binades_sum_to_the_sweep_over_the_same_patterns() -> None:
    counts = floor_rceil_binades(range(6, 12))
    assert counts.tolist()[-3:] == [2**21 - 1] * 3
    whole = sweep_pair(PAIRS[0], run=RangeRun(start=6 << 23, stop=12 << 23))
    assert int(counts.sum()) == whole.differ
    with pytest.raises(ValueError, match="biased exponents"):
        floor_rceil_binades(range(250, 257))


def test_population_splits_catch_every_pair_with_a_margin() -> None:
    rows = {r.pair: r for r in population_splits(seed=0)}
    assert set(rows) == set(study.SPLIT_PAIRS)
    assert all(r.differ >= 3 and sum(r.by_case.values()) == r.differ for r in rows.values())
    assert rows["per-token divide vs reciprocal"].rule_b == "vllm-per-token/reciprocal"
    assert set(rows["per-group divide vs reciprocal"].by_case) == {"near-ties", "divide-split"}


def test_a_rule_against_itself_splits_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    same = RULES["vllm-per-token"]
    monkeypatch.setattr(study, "SPLIT_PAIRS", {"same": (same, same)})
    (row,) = population_splits(seed=0)
    assert row.words > 10_000 and row.differ == 0 and row.by_case == {}
