"""``rules infer`` recovers the NVFP4 rule fp8lab names after torchao from torchao itself.

With torch and torchao installed (the ``ecosystem`` extra), ``nvfp4_quantize``
(``examples/torchao/torchao_nvfp4.py``) is inferred as ``torchao-0.18-nvfp4``'s
own declaration, the only one of the candidates that reproduces every call, and
the rule file written for it passes GQ on torchao. Skipped, with the reason,
without them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fp8lab.specs.nvfp4_rule_file import read_any_rule_file
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from tests.conftest import needs
from tests.in_process import run_main

pytestmark = [pytest.mark.process, needs("torch", "torchao", extra="ecosystem")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchao"
KERNEL = ["--kernel", "torchao_nvfp4:quantize", "--arrays", "torch"]


def _fp8lab(*argv: str) -> subprocess.CompletedProcess[str]:
    return run_main(argv, cwd=EXAMPLE, path=[EXAMPLE])


def test_torchao_nvfp4_is_inferred_as_its_rule(tmp_path: Path) -> None:
    out, rule_file = tmp_path / "r.json", tmp_path / "r.toml"
    argv = ["--scheme", "nvfp4", *KERNEL, "--json", str(out), "--write-rule", str(rule_file)]
    done = _fp8lab("rules", "infer", *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "torchao-0.18-nvfp4's own declaration" in done.stdout
    record = json.loads(out.read_text())
    assert record["status"] == "reproduced" and record["matching_candidates"] == 1
    assert record["nearest_named_rule"] == "torchao-0.18-nvfp4"
    assert record["differing_axes"] == {} and record["mismatches"]["words"] == 0
    assert record["chosen_rule"]["block_bounds"] == [2.0**-6, 448.0]
    (rule,) = read_any_rule_file(rule_file)
    assert isinstance(rule, Nvfp4ScaleRule)
    named = NVFP4_RULES["torchao-0.18-nvfp4"]
    assert (rule.order, rule.tensor_scale, rule.nan_code) == (
        named.order,
        named.tensor_scale,
        named.nan_code,
    )
    gate = ["--gate", "GQ", "--scheme", "nvfp4", "--rule-file", str(rule_file)]
    checked = _fp8lab("gates", *gate, "--rule", "inferred-nvfp4", *KERNEL)
    assert checked.returncode == 0 and "PASS" in checked.stdout, checked.stdout + checked.stderr
