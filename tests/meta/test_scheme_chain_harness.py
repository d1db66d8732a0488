"""The GQ/GF mutation harness can go red: a do-nothing mutant SURVIVES, a stale one is refused.

A kill means something only if the same harness, handed the unmutated port
through the same patch-and-compile path, reports SURVIVED; only if a patch
that no longer matches the port is INCOMPETENT (never silently the port);
and only if a port that fails its gate unmutated stops the run.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import pytest

import fp8lab.mutants.runner as runner
from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels import scheme as port
from fp8lab.mutants import chain_mutants, scheme_mutants
from fp8lab.mutants.catalogue import CATALOGUE
from fp8lab.mutants.chain_mutants import ChainMutant, chain_subject
from fp8lab.mutants.harness import judge
from fp8lab.mutants.patch import SourcePatch
from fp8lab.mutants.scheme_mutants import SchemeMutant, SchemeSubject, scheme_subjects
from fp8lab.populations.schemes import E8M0_LOG2_SPLIT_AMAX_BITS, scheme_population
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES, E8m0Exponent

RUNNERS = runner.gate_runners(["GQ", "GF"])
GQ42, GF80 = {"GQ": 42}, {"GF": 80}  # the unmutated ports' case counts


def test_the_unmutated_scheme_port_survives() -> None:
    noop = SchemeMutant((("per-group", "vllm-per-group"), ("mxfp8", "rceil")), ())
    build = partial(scheme_subjects, "noop", noop)
    result = judge("noop", "no edit", "scheme", build, RUNNERS, GQ42)
    assert result.built and result.verdict is MutantVerdict.SURVIVED
    assert result.failed_assertions == result.moved_words == 0 and result.assertions == 84
    assert not result.case_count_changed


def test_the_unmutated_chain_port_survives() -> None:
    noop = ChainMutant("vllm-cpp-standalone-rmsnorm-fp8", ())
    result = judge("noop", "no edit", "chain", partial(chain_subject, "noop", noop), RUNNERS, GF80)
    assert result.built and result.verdict is MutantVerdict.SURVIVED
    assert result.failed_assertions == 0 and result.assertions == 80


def test_a_stale_edit_is_incompetent_not_the_port() -> None:
    stale = SchemeMutant((("per-group", "vllm-per-group"),), (("no such text", "x"),))
    result = judge("stale", "stale", "scheme", partial(scheme_subjects, "s", stale), RUNNERS, GQ42)
    assert result.verdict is MutantVerdict.INCOMPETENT and "occurs 0 times" in result.build_error
    with pytest.raises(ValueError, match="occurs 2 times"):
        SourcePatch("fp8lab.kernels.chain", (('t["silu"] = a = _silu_f32(g)\n', ""),)).text()


def test_an_unmutated_port_that_fails_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> list[SchemeSubject]:
        def wrong(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return port.scheme_quant(x, "vllm-per-token")

        return [SchemeSubject("broken", "per-token", "vllm-native-per-token", wrong)]

    monkeypatch.setitem(runner._RESTORED_PER_MUTANT, "scheme", broken)
    q01 = [m for m in CATALOGUE if m.id == "Q01"]
    with pytest.raises(ValueError, match=r"unmutated broken \(for Q01\).* FAIL under GQ"):
        runner.run_catalogue(("GQ",), catalogue=q01)


def test_a_broken_chain_port_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> chain_mutants.ChainSubject:
        mutant = chain_mutants.CHAIN_MUTANTS["eps_outside_sqrt"]
        return chain_subject("broken", mutant)  # a mutant posing as the restored port

    monkeypatch.setitem(runner._RESTORED_PER_MUTANT, "chain", broken)
    c02 = [m for m in CATALOGUE if m.id == "C02"]
    with pytest.raises(ValueError, match=r"unmutated broken \(for C02\).* FAIL under GF"):
        runner.run_catalogue(("GF",), catalogue=c02)


def test_only_the_amax_last_case_sees_the_block_off_by_one() -> None:
    """The strengthening behind Q07: every other GQ case is blind to it (both subjects)."""
    subjects = scheme_mutants.SCHEME_BUILDERS["block_off_by_one"]()
    seen = set()
    for subject in subjects:
        for label, x in scheme_population("e4m3fn", 0):
            codes, scales = subject.func(x)
            want_codes, want_scales = port.scheme_quant(x, subject.rule)
            if codes.tobytes() + scales.tobytes() != want_codes.tobytes() + want_scales.tobytes():
                seen.add(label)
    assert seen == {"amax-last"}


def _reference_byte(amax_bits: int, rule: object) -> int:
    """The exact reference's e8m0 byte of one 32-element block whose amax has these bits."""
    x = np.full((1, 32), np.uint32(amax_bits).view(np.float32))
    return int(reference_scheme_quant(x, rule)[1][0, 0])  # type: ignore[arg-type]


def test_the_log2_split_amaxes_split_the_e8m0_exponent_and_their_neighbours_do_not() -> None:
    """Re-derived with the exact reference (not the port that chose them): each designed
    amax gets a byte one below the exponent bits' under torchao RCEIL's float32 log2, and
    the pattern above it (the highest split of its binade) gets the same byte from both."""
    rule = RULES["torchao-0.18-mxfp8-rceil"]
    bits_twin = dataclasses.replace(rule, name="bits-twin", e8m0_exponent=E8m0Exponent.BITS)
    designed = [b for call in E8M0_LOG2_SPLIT_AMAX_BITS for b in call]
    assert len(designed) == len(set(designed)) == 12
    for b in designed:
        assert _reference_byte(b, rule) + 1 == _reference_byte(b, bits_twin), hex(b)
        assert _reference_byte(b + 1, rule) == _reference_byte(b + 1, bits_twin), hex(b + 1)


def test_only_the_log2_split_and_pow2_cases_see_the_e8m0_exponent_mutant() -> None:
    """Q22's strengthening: three log2-split calls on float32, beside pow2-amax's one."""
    (subject,) = scheme_mutants.SCHEME_BUILDERS["e8m0_exponent_bits_for_log2"]()
    seen = []
    for label, x in scheme_population("e4m3fn", 0):
        codes, scales = subject.func(x)
        want_codes, want_scales = port.scheme_quant(x, subject.rule)
        if codes.tobytes() + scales.tobytes() != want_codes.tobytes() + want_scales.tobytes():
            seen.append(label)
    assert seen == ["pow2-amax", "log2-split", "log2-split", "log2-split"]
