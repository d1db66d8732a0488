"""Split tables: shipped for every named rule, current, cached per digest for any other rule.

The shipped file is regenerated in part here (one row of one rule), and the
designed ``log2-split`` gap (under ``rceil``, an exponent by ``ceil(log2f(.))``
failed 1 call of 34) is closed by the derived population.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pytest

from fp8lab.populations import rule_splits, split_cache
from fp8lab.populations.rule_splits import AxisSplit, axis_values, probe_rows, split_table
from fp8lab.populations.split_cache import cached_split_table, rule_digest, shipped_tables
from fp8lab.specs.scale_rules import RULES, E8m0Exponent, get_rule


def test_every_named_rule_has_a_shipped_table_of_every_axis_value() -> None:
    shipped = shipped_tables()
    for name, rule in RULES.items():
        table = shipped[rule_digest(rule)]
        got = [(s.axis, s.value) for s in table]
        want = [(a, _text(v)) for a, v in axis_values(rule)]
        assert got == want, name
        for s in table:
            assert s.status in ("split", "equal", "moot", "layout", "undecidable"), (name, s)
            if s.status == "split":
                calls = s.base_calls + len(s.float32_amaxes) + len(s.bfloat16_amaxes)
                assert calls >= 3, (name, s)
            else:
                assert s.reason, (name, s)


def _text(value: object) -> str:
    return rule_splits.derived_name("", {"x": value})[3:-1]


def test_one_row_of_the_shipped_table_is_what_the_search_finds_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rule = RULES["vllm-per-group-ue8m0"]
    monkeypatch.setattr(
        rule_splits, "axis_values", lambda r: [("pow2", rule.pow2.__class__("none"))]
    )
    (row,) = split_table(rule)
    shipped = {(s.axis, s.value): s for s in shipped_tables()[rule_digest(rule)]}
    assert shipped[("pow2", "none")] == row


def test_the_log2_gap_under_rceil_is_closed() -> None:
    rule = RULES["rceil"]
    (row,) = [s for s in cached_split_table(rule) if s.axis == "e8m0_exponent"]
    assert row.value == "log2-float32" and row.status == "split"
    assert len(row.float32_amaxes) == 3 and row.base_calls + 3 >= 3
    log2 = dataclasses.replace(rule, e8m0_exponent=E8m0Exponent.LOG2_FLOAT32)
    from fp8lab.kernels.scheme import amax_scales

    amax = np.array(row.float32_amaxes, np.uint32).view(np.float32)
    assert (amax_scales(amax, rule) != amax_scales(amax, log2)).all()


def test_a_rule_of_ones_own_gets_its_table_on_first_use_then_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = get_rule("vllm-per-token[apply=reciprocal]")
    assert rule_digest(mine) not in shipped_tables()
    calls = []
    real = split_cache.split_table
    monkeypatch.setattr(split_cache, "split_table", lambda r: calls.append(r) or real(r))
    monkeypatch.setattr(
        rule_splits, "axis_values", lambda r: [("apply", mine.apply.__class__("divide"))]
    )
    t0 = time.monotonic()
    first = cached_split_table(mine, tmp_path)
    assert time.monotonic() - t0 >= 0  # measured in docs/rules.md, not asserted
    assert calls == [mine] and (tmp_path / f"{rule_digest(mine)}.json").is_file()
    assert cached_split_table(mine, tmp_path) == first and calls == [mine]
    (tmp_path / f"{rule_digest(mine)}.json").write_text("not json")
    assert cached_split_table(mine, tmp_path) == first and len(calls) == 2


def test_a_digest_ignores_the_name_and_source_and_sees_every_other_field() -> None:
    rule = RULES["rceil"]
    assert rule_digest(dataclasses.replace(rule, name="x", source="y")) == rule_digest(rule)
    assert rule_digest(get_rule("rceil[e8m0_nan=zero-byte]")) != rule_digest(rule)


def test_probe_rows_carry_their_amax_in_every_16_elements() -> None:
    bits = np.array([0x3F80_0000, 0x4400_0000, 0x0000_0001], np.uint32)
    rows = probe_rows(bits, "e4m3fn", 128)
    amax = bits.view(np.float32)
    for i in range(3):
        blocks = np.abs(rows[i].reshape(-1, 16))
        assert (blocks.max(axis=1) == amax[i]).all()


def test_the_table_round_trips_through_json() -> None:
    table = shipped_tables()[rule_digest(RULES["ocp-floor"])]
    again = split_cache.table_from_json(json.loads(json.dumps(split_cache.table_to_json(table))))
    assert again == table and all(isinstance(s, AxisSplit) for s in again)


def test_the_rules_catalogue_mutants_are_gated_under_ship_their_tables_too() -> None:
    from fp8lab.mutants.scheme_mutants import SCHEME_MUTANTS

    derived = {r for m in SCHEME_MUTANTS.values() for _, r in m.gated_as if "[" in r}
    assert derived and all(rule_digest(get_rule(r)) in shipped_tables() for r in derived)


def test_no_shipped_row_is_left_undecidable() -> None:
    """Every row of a shipped table is split, proved equal, moot with its argument, or layout."""
    left = [
        (entry["rule"], row["axis"], row["value"])
        for entry in json.loads(
            (Path(split_cache.__file__).parent / split_cache.SHIPPED).read_text()
        )["rules"].values()
        for row in entry["splits"]
        if row["status"] == "undecidable"
    ]
    assert left == []


def test_an_argument_for_equal_words_never_hides_a_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted argument that calls every variant the same leaves the split rows split."""
    rule = RULES["vllm-per-group-ue8m0"]
    monkeypatch.setattr(rule_splits, "_same_words", lambda *_: "planted: the same words")
    shipped = {(s.axis, s.value): s.status for s in shipped_tables()[rule_digest(rule)]}
    table = split_table(rule)
    assert any(s.status == "split" for s in table)
    for row in table:
        if shipped[row.axis, row.value] == "split":
            assert row.status == "split", row
        elif row.status == "moot" and row.reason.startswith("planted"):
            assert shipped[row.axis, row.value] != "split"


def test_a_derived_rules_variant_keeps_one_bracket() -> None:
    base = "rceil[e8m0_nan=zero-byte]"
    name = rule_splits.derived_name(base, {"scale_from": get_rule("rceil").scale_from})
    assert name == "rceil[e8m0_nan=zero-byte;scale_from=reciprocal]"
    assert get_rule(name).e8m0_nan == get_rule(base).e8m0_nan
    assert rule_splits.derived_name(base, {"e8m0_nan": "nan-byte"}) == "rceil[e8m0_nan=nan-byte]"
