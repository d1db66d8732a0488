"""Scale rules are data: the built-in ones are a TOML file, and a user's rule file of the same form
checks a kernel under GQ; a malformed file is one line naming what is wrong."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from fp8lab.specs.scale_rules import RULES, Apply, parse_rules, read_rule_file
from tests.meta.gates_subprocess import run_gates

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ROOT / "fp8lab" / "specs" / "rules" / "scale_rules.toml"

MY_RULE = """
[[rule]]
name = "my-per-token-reciprocal"
source = "a kernel that follows vLLM's per-token rule but multiplies by float32(1/s)"
element = "e4m3fn"
scale_format = "float32"
granularity = "row"
amax_nan = "skip"
amax_init = 0.0
scale_from = "divide"
min_scale = 4.359654017857143e-06
pow2 = "none"
apply = "reciprocal"
clamp = "min-then-max"
"""

KERNELS = """
import dataclasses

from fp8lab.kernels.scheme import SCHEME_PORTS
from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES, Apply

_TWIN = dataclasses.replace(RULES["vllm-per-token"], name="twin", apply=Apply.RECIPROCAL)


def reciprocal(x):
    return reference_scheme_quant(x, _TWIN)


divide = SCHEME_PORTS["vllm-per-token"]
"""


def test_the_built_in_rules_are_the_data_file() -> None:
    assert tuple(RULES.values()) == read_rule_file(BUILTIN)
    assert RULES["vllm-per-token"].min_scale == 1.0 / (448.0 * 512.0)


def test_a_user_rule_parses_to_its_choices() -> None:
    (rule,) = parse_rules(MY_RULE)
    twin = dataclasses.replace(RULES["vllm-per-token"], apply=Apply.RECIPROCAL)
    assert dataclasses.replace(rule, name=twin.name, source=twin.source) == twin


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('clamp = "min-then-max"', 'clamp = "sideways"'), "clamp = 'sideways'"),
        (lambda t: t.replace("amax_init = 0.0", 'amax_init = "zero"'), "is not a number"),
        (lambda t: t.replace('pow2 = "none"\n', ""), "missing key 'pow2'"),
        (lambda t: t + "rounding = 'away'\n", "unknown key 'rounding'"),
        (lambda t: t + t, "given twice"),
        (lambda t: "[[rule]\n", "not TOML"),
        (lambda t: "", "[[rule]] tables"),
    ],
)
def test_a_malformed_rule_file_names_what_is_wrong(
    edit: Callable[[str], str], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_rules(edit(MY_RULE), "r.toml")


@pytest.mark.process
def test_gq_holds_a_kernel_to_a_rule_of_a_rule_file(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(MY_RULE)
    (tmp_path / "kern.py").write_text(KERNELS)
    argv = ["--gate", "GQ", "--rule-file", "mine.toml", "--rule", "my-per-token-reciprocal"]
    right = run_gates(tmp_path, *argv, "--kernel", "kern:reciprocal")
    assert right.returncode == 0, right.stdout + right.stderr
    assert "rule my-per-token-reciprocal" in right.stdout
    wrong = run_gates(tmp_path, *argv, "--kernel", "kern:divide")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout, wrong.stdout + wrong.stderr


@pytest.mark.process
@pytest.mark.parametrize(
    ("text", "rule", "message"),
    [
        (MY_RULE.replace('"row"', '"diagonal"'), "my-per-token-reciprocal", "granularity"),
        (
            MY_RULE.replace("my-per-token-reciprocal", "vllm-per-token"),
            "vllm-per-token",
            "built-in",
        ),
        (MY_RULE, "another", "name one of its rules"),
    ],
)
def test_a_bad_rule_file_is_one_usage_line(
    tmp_path: Path, text: str, rule: str, message: str
) -> None:
    (tmp_path / "bad.toml").write_text(text)
    (tmp_path / "kern.py").write_text(KERNELS)
    argv = ["--gate", "GQ", "--rule-file", "bad.toml", "--rule", rule, "--kernel", "kern:divide"]
    proc = run_gates(tmp_path, *argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
