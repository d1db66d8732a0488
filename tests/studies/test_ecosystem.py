"""The ecosystem notebook's rows: the amax split, absent libraries, missing rules, the verdicts.

The kernels here are stand-ins run in this process (each rule's numpy port), so
the row logic is tested without torch; the library kernels themselves are
tested in ``tests/kernels/test_library.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from fp8lab.gates.gq import GqCall
from fp8lab.kernels.scheme import Nvfp4Port, amax_scales, scheme_quant
from fp8lab.refs.schemes import reference_scheme_quant
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.specs.scale_rules import RULES, Granularity
from fp8lab.studies import ecosystem as eco
from fp8lab.studies.ecosystem import (
    ECOSYSTEM_ROWS,
    LibraryRow,
    amax_split,
    ecosystem_row,
    missing_rules,
    summary,
    unexpected,
)
from fp8lab.sweeps.range_run import RangeRun

# the float8 and e8m0 rules (nvfp4's split: test_ecosystem_nvfp4.py)
ROW_RULES = sorted({n for r in ECOSYSTEM_ROWS for n in (r.own_rule, r.spec_rule) if n in RULES})
SPECIALS = np.array(
    [0, 1, 0x7FFFFF, 0x800000, 0x3F800000, 0x43E00000, 0x3B000000, 0x7F7FFFFF, 0x7F800000],
    np.uint32,
)


def port_runner(rule: str) -> Any:
    """A stand-in for the isolated library kernel: ``rule``'s port, here, on inputs as they are."""

    def run(_row: LibraryRow, calls: list[GqCall]) -> list[Any]:
        return [scheme_quant(np.asarray(c.args[0]), rule) for c in calls]

    return run


@pytest.mark.parametrize("name", ROW_RULES)
def test_amax_scales_equal_the_exact_reference(name: str) -> None:
    rule = dataclasses.replace(RULES[name], granularity=Granularity.ROW, block=None)
    rng = np.random.default_rng(20261204)
    bits = np.concatenate([SPECIALS, rng.integers(0, 0x7F800000, 2000, dtype=np.uint32)])
    amax = bits.view(np.float32)
    _, want = reference_scheme_quant(amax[:, None], rule)
    got = amax_scales(amax, name)
    assert got.dtype == want.dtype
    word = np.dtype(f"u{got.dtype.itemsize}")  # float32 scales, or e8m0 bytes
    assert np.array_equal(got.view(word), want.reshape(-1).view(word))


def test_a_rule_against_itself_splits_nowhere() -> None:
    split = amax_split("vllm-per-token", "vllm-per-token", RangeRun(start=0, stop=1 << 20))
    assert (split.examined, split.scale_differs, split.applied_differs) == (1 << 20, 0, 0)
    assert split.first_differ == -1


def test_a_planted_min_scale_is_counted_exactly() -> None:
    # compressed-tensors' token rule against vLLM's: vLLM floors the scale at min_scale,
    # so in the binade [2^-12, 2^-11) (scales below min_scale) every pattern splits
    lo, hi = 0x39800000, 0x3A000000
    split = amax_split(
        "compressed-tensors-0.20-token", "vllm-per-token", RangeRun(start=lo, stop=hi)
    )
    assert split.scale_differs == hi - lo and split.first_differ == lo
    above = amax_split(
        "compressed-tensors-0.20-token",
        "vllm-per-token",
        RangeRun(start=0x3F000000, stop=0x3F100000),
    )
    assert above.scale_differs == 0


def test_a_multiplier_and_a_divisor_agree_where_they_are_exact_reciprocals() -> None:
    at_448 = 0x43E00000  # amax 448: torchao stores 1.0, vLLM divides by 1.0
    split = amax_split(
        "torchao-0.18-float8-tensorwise", "vllm-per-tensor", RangeRun(start=at_448, stop=at_448 + 2)
    )
    assert (split.scale_differs, split.applied_differs) == (1, 1)  # 448 agrees, its neighbour not


def test_an_absent_library_says_absent_and_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(eco.IMPORT_NAMES, "torchao", "fp8lab_no_such_module")

    def never(*_: Any) -> list[Any]:
        raise AssertionError("an absent library's kernel was run")

    row = ecosystem_row(ECOSYSTEM_ROWS[0], RangeRun(start=0, stop=1 << 10), runner=never)
    assert (row["version"], row["status"]) == ("absent", "absent")
    assert row["own_status"] is None and row["differing_axes"]
    assert not unexpected(row)
    assert summary([row])[0][f"torchao per-tensor under {row['own_rule']}"].startswith("PENDING")


def test_a_library_without_torch_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    real = eco.importlib.util.find_spec
    monkeypatch.setattr(
        eco.importlib.util, "find_spec", lambda name: None if name == "torch" else real(name)
    )
    assert eco.library_version("compressed-tensors") is None


def test_a_rule_not_in_this_build_says_so() -> None:
    late = LibraryRow("torchao", "mx", "m:f", "torchao-0.18-mxfp8-floor-not-here", "ocp-floor")
    assert missing_rules(late) == ("torchao-0.18-mxfp8-floor-not-here",)
    row = ecosystem_row(late, RangeRun(start=0, stop=16))
    assert row["status"] == "rule not in this build" and "not-here" in row["reason"]
    assert not unexpected(row)


def test_the_own_rules_port_passes_its_rule_and_fails_the_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(eco, "library_version", lambda _lib: "0.0-test")
    entry = ECOSYSTEM_ROWS[3]  # compressed-tensors per token
    row = ecosystem_row(entry, RangeRun(start=0, stop=1 << 16), runner=port_runner(entry.own_rule))
    assert row["status"] == "checked" and row["inferred_rule"] == entry.own_rule
    assert (row["own_status"], row["own_mismatches"]) == ("PASS", 0)
    assert row["spec_status"] == "FAIL" and row["spec_mismatches"] > 0
    assert "min_scale: None -> " in row["differing_axes"]
    assert not unexpected(row)


def test_the_nvfp4_row_passes_its_rule_and_fails_te(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eco, "library_version", lambda _lib: "0.0-test")
    (entry,) = [r for r in ECOSYSTEM_ROWS if r.scheme == "nvfp4"]
    port = Nvfp4Port(entry.own_rule)

    def run(_row: LibraryRow, calls: list[GqCall]) -> list[Any]:
        return [port(*(np.asarray(a) for a in c.args)) for c in calls]

    row = ecosystem_row(
        entry, RangeRun(start=0x3D80_0000, stop=0x3D80_0000 + (1 << 16)), runner=run
    )
    assert row["status"] == "checked" and row["inferred_rule"] == entry.own_rule
    assert (row["own_status"], row["own_mismatches"]) == ("PASS", 0)
    assert row["spec_status"] == "FAIL" and row["spec_mismatches"] > 0
    assert "block_bounds: (0.015625, 448.0) -> None" in row["differing_axes"]  # library's first
    assert "tensor_scale: divisor -> encode" in row["differing_axes"]
    assert row["amax_global"] == 2688.0 and row["amax_scale_differs"] == 1 << 16
    assert not unexpected(row)


def test_a_kernel_that_follows_the_spec_rule_is_unexpected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eco, "library_version", lambda _lib: "0.0-test")
    entry = ECOSYSTEM_ROWS[3]
    row = ecosystem_row(entry, RangeRun(start=0, stop=16), runner=port_runner(entry.spec_rule))
    assert row["own_status"] == "FAIL" and row["spec_status"] == "PASS"
    assert len(unexpected(row)) == 3


def test_a_kernel_fault_is_a_row_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eco, "library_version", lambda _lib: "0.0-test")

    def faulty(*_: Any) -> list[Any]:
        raise KernelFaultError("the kernel exited with status 1")

    row = ecosystem_row(ECOSYSTEM_ROWS[1], RangeRun(start=0, stop=16), runner=faulty)
    assert row["status"] == "kernel fault" and "status 1" in row["reason"]
    assert unexpected(row) and summary([row])[0]


def test_axis_rows_are_read_from_the_rule_records() -> None:
    late = LibraryRow("torchao", "mx", "m:f", "torchao-0.18-mxfp8-floor-not-here", "ocp-floor")
    table = [ecosystem_row(r, RangeRun(start=0, stop=16)) for r in (late,)]
    table.append(
        {
            "library": "x",
            "scheme": "per-token",
            "own_rule": "vllm-per-token",
            "spec_rule": "vllm-native-per-token",
        }
    )
    rows = eco.axis_rows(table)
    assert [r["axis"] for r in rows] == ["amax_nan", "apply", "clamp"]
    assert (rows[1]["own"], rows[1]["spec"]) == ("divide", "reciprocal")


@pytest.mark.parametrize("at", [0x43E00000, 0x44600000, 0x3BE00000])  # 448, 896, 448 / 2^16
def test_a_multiplier_and_a_divider_apply_alike_only_by_exact_powers_of_two(at: int) -> None:
    # torchao multiplies by 448 / amax, compressed-tensors divides by amax / 448
    split = amax_split(
        "torchao-0.18-float8-tensorwise",
        "compressed-tensors-0.20-tensor",
        RangeRun(start=at, stop=at + 2),
    )
    assert (split.scale_differs, split.applied_differs) == (1, 1)


def test_a_full_split_is_held_to_its_published_count() -> None:
    (own, spec), want = next(iter(eco.FULL_SPLITS.items()))
    row = {"own_rule": own, "spec_rule": spec, "amax_examined": eco.ALL_NON_NEGATIVE}
    keys = ("amax_scale_differs", "amax_applied_differs", "amax_nan_differs")
    assert not eco.split_unexpected({**row, **dict(zip(keys, want, strict=True))})
    off = dict(zip(keys, (want[0] + 1, want[1], want[2]), strict=True))
    assert eco.split_unexpected({**row, **off}) == [
        f"amax split {tuple(off.values())}, published {want}"
    ]
    assert not eco.split_unexpected({**row, **off, "amax_examined": 1 << 16})  # a window: no count
    absent = {**row, **off, "status": "absent"}
    assert eco.unexpected(absent)  # an absent library's split is still held to its count


@pytest.mark.parametrize("row", ECOSYSTEM_ROWS, ids=lambda r: r.own_rule)
def test_a_chunk_in_steps_counts_what_the_chunk_in_one_piece_counts(row: LibraryRow) -> None:
    # the stepped numpy split adds up per-pattern counts: one piece must give the same numbers
    nvfp4 = row.scheme == "nvfp4"
    one_piece = eco.nv.nvfp4_split_chunk if nvfp4 else eco._split_step
    numpy = () if nvfp4 else ("numpy",)
    stepped = eco._nvfp4_split_chunk if nvfp4 else eco._split_chunk
    for lo in (0x39800000 - eco._STEP // 2, 0x43E00000 - eco._STEP - 3, 0x7F800000 - eco._STEP):
        hi = lo + 2 * eco._STEP + 5
        assert stepped(row.own_rule, row.spec_rule, lo, hi, *numpy) == one_piece(
            row.own_rule, row.spec_rule, lo, hi
        )
