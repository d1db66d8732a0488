"""The shared pre-verdict screen: every way a gate can examine nothing or nothing useful."""

from __future__ import annotations

from fp8lab.gates.records import CaseResult, GateStatus, mostly_zero, screen


def case(name: str, words: int = 8, nonzero: float = 1.0, error: str = "") -> CaseResult:
    return CaseResult(name, words, 1, 0, 0, 0, nonzero, error)


def test_a_clean_population_passes_the_screen() -> None:
    cases = [case("a"), case("b")]
    assert screen(cases, vacuous=mostly_zero(cases), what="x") is None


def test_no_case_and_no_word_both_examine_nothing() -> None:
    assert screen([], vacuous=[], what="x") == (GateStatus.FAIL, "examined nothing")
    empty = [case("a", words=0), case("b", words=0)]
    assert screen(empty, vacuous=[], what="x") == (GateStatus.FAIL, "examined nothing")


def test_a_kernel_error_fails_and_names_its_case() -> None:
    verdict = screen([case("a"), case("b", error="boom")], vacuous=[], what="x")
    assert verdict == (GateStatus.FAIL, "b: boom")


def test_a_mostly_zero_reference_is_vacuous() -> None:
    cases = [case("a"), case("half", nonzero=0.5)]
    assert mostly_zero(cases) == ["half"]
    verdict = screen(cases, vacuous=mostly_zero(cases), what="reference mostly zero")
    assert verdict == (GateStatus.FAIL, "vacuous: reference mostly zero in half")
