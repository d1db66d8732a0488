"""Gate records as JUnit XML: one ``testcase`` per gate case, so any CI shows each case.

The class of a test case is ``GATE.KERNEL``, its name the case's name; a
failed case carries the gate's first offenders in that case, in hex, as its
failure message. A gate with no cases (its kernel ended before one ran) is
one test case named ``(no case ran)``, failed with the gate's reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from fp8lab.gates.records import CaseResult, GateResult, GateStatus

__all__ = ["junit_xml"]


def _failure(result: GateResult, case: CaseResult) -> str:
    if case.error:
        return case.error
    lines = [
        f"{case.assertions_failed} of {case.assertions} assertions failed: "
        f"{case.mismatches} byte mismatches, {case.nan_code_mismatches} NaN-code mismatches"
    ]
    for o in result.first_offenders:
        if o.case == case.name:
            lines.append(f"{o.word_class} {o.where()} got {o.got} want {o.want}")
    return "\n".join(lines)


def junit_xml(results: Sequence[GateResult]) -> bytes:
    """The JUnit XML document of ``results`` (UTF-8, with its declaration)."""
    suites = ET.Element("testsuites", name="fp8lab gates")
    for result in results:
        suite = ET.SubElement(suites, "testsuite", name=f"{result.gate}.{result.kernel}")
        cases = list(result.case_results) or [
            CaseResult("(no case ran)", 0, 0, 1, 0, 0, 0.0, result.reason or "no case ran")
        ]
        failures = skipped = 0
        for case in cases:
            node = ET.SubElement(
                suite, "testcase", classname=f"{result.gate}.{result.kernel}", name=case.name
            )
            if result.status is GateStatus.PENDING:
                ET.SubElement(node, "skipped", message=result.reason or "PENDING")
                skipped += 1
            elif case.assertions_failed or case.error:
                failure = _failure(result, case)
                ET.SubElement(node, "failure", message=failure.splitlines()[0]).text = failure
                failures += 1
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
    data: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return data
