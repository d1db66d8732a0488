"""--junit-xml: one testcase per gate case; a failed case carries its offenders."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from fp8lab.gates import run_g1
from fp8lab.gates.junit import junit_xml
from fp8lab.kernels import FunctionKernel, quant_static


def _divide(x: np.ndarray, scale: float) -> np.ndarray:
    return quant_static(np.asarray(x, np.float32) / np.float32(scale), np.float32(1.0))


def test_one_testcase_per_case_and_failures_only_where_the_case_failed() -> None:
    good = run_g1(FunctionKernel("good", quant_static))
    bad = run_g1(FunctionKernel("divide", _divide))
    root = ET.fromstring(junit_xml([good, bad]))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["G1.good", "G1.divide"]
    good_cases, bad_cases = (s.findall("testcase") for s in suites)
    assert len(good_cases) == good.cases and not suites[0].findall(".//failure")
    failed = [c for c in bad.case_results if c.assertions_failed]
    assert len(bad_cases) == bad.cases and len(suites[1].findall(".//failure")) == len(failed) > 0
    text = suites[1].find(".//failure").text or ""  # type: ignore[union-attr]
    assert "got 0x" in text and "want 0x" in text
    assert suites[1].get("failures") == str(len(failed))


def test_a_gate_that_ran_no_case_is_one_failed_testcase() -> None:
    from fp8lab.gates import GateResult, GateStatus

    dead = GateResult("G1", "k", GateStatus.FAIL, "kernel process exited", 0, 0, 0, 0, 0, 0)
    root = ET.fromstring(junit_xml([dead]))
    (case,) = root.findall(".//testcase")
    assert case.get("name") == "(no case ran)"
    assert case.find("failure").get("message") == "kernel process exited"  # type: ignore[union-attr]
