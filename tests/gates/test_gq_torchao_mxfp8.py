"""torchao 0.18.0's MXFP8 quantizer (``to_mx``, FLOOR and RCEIL) under fp8lab's mxfp8 rules.

Neither mode follows the rule it is closest to: torchao FLOOR departs from
``ocp-floor`` and torchao RCEIL from ``rceil`` only in the special-value
families (a block whose scale byte is 0, an inf amax and, for FLOOR, a NaN
block; for RCEIL also the float32 ``log2`` of a scale just above a power of
two), while every ordinary case agrees bit for bit. These tests pin that
record, and that each mode passes the rule naming its choices
(``torchao-0.18-mxfp8-floor``, ``torchao-0.18-mxfp8-rceil``).
Skipped, with the reason, without torch and torchao.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import needs
from tests.in_process import run_main

pytestmark = [pytest.mark.process, needs("torch", "torchao", extra="ecosystem")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchao"


def _gq(rule: str, kernel: str, out: Path, status: str = "FAIL") -> dict[str, object]:
    argv = ["--gate", "GQ", "--scheme", "mxfp8", "--rule", rule, "--kernel", kernel]
    done = run_main(
        ["gates", *argv, "--arrays", "torch", "--json", str(out)], cwd=EXAMPLE, path=[EXAMPLE]
    )
    code = 1 if status == "FAIL" else 0
    assert done.returncode == code and status in done.stdout, done.stdout + done.stderr
    records = json.loads(out.read_text())
    assert isinstance(records, list) and len(records) == 1
    record: dict[str, object] = records[0]
    return record


@pytest.mark.parametrize(
    ("rule", "kernel", "families"),
    [
        # log2-split: for FLOOR its first call's amax 448 * 2**-127 (+ 40 ulps) takes byte 0;
        # for RCEIL every call, each amax being one where the float32 log2 rounds down.
        # rule-split: the calls derived from the rule's split table hold, among others, the
        # amaxes that split e8m0_zero, e8m0_inf and e8m0_exponent: the same departures;
        # nan-lane (FLOOR): a block with a NaN, whose finite elements torchao sends to zero
        (
            "ocp-floor",
            "floor",
            {"pow2-amax", "nan", "neg-nan", "inf", "subnormal", "log2-split", "rule-split"}
            | {"nan-lane"},
        ),
        ("rceil", "rceil", {"pow2-amax", "inf", "subnormal", "log2-split", "rule-split"}),
    ],
)
def test_torchao_mxfp8_departs_only_in_special_values(
    rule: str, kernel: str, families: set[str], tmp_path: Path
) -> None:
    record = _gq(rule, f"torchao_mxfp8:{kernel}", tmp_path / "gq.json")
    assert record["status"] == "FAIL"
    cases = record["case_results"]
    assert isinstance(cases, list)
    failed = {str(c["name"]).split("#")[0] for c in cases if c["assertions_failed"]}
    assert failed == families
    by_class = record["mismatches_by_class"]
    assert isinstance(by_class, dict)
    for name in ("random", "ties", "near-ties", "at-max", "negative", "zero", "amax-last"):
        assert by_class[name] == 0, (name, by_class)


@pytest.mark.parametrize("kernel", ["floor", "rceil"])
def test_torchao_mxfp8_passes_its_own_rule(kernel: str, tmp_path: Path) -> None:
    rule = f"torchao-0.18-mxfp8-{kernel}"
    record = _gq(rule, f"torchao_mxfp8:{kernel}", tmp_path / "gq.json", status="PASS")
    assert record["status"] == "PASS" and record["mismatches"] == 0
