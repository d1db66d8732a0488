"""NVFP4 rules as rule files: each published rule reads back as itself; a malformed one is refused.

A table with an ``order`` key is an NVFP4 rule (the keys ``fp8lab rules show``
prints for one); GQ checks a kernel under such a rule when it has a name of its
own: it passes the port it describes and fails one it does not. Under a
published name it must be that rule.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fp8lab.gates.gq import run_gq
from fp8lab.gates.records import GateStatus
from fp8lab.kernels.scheme import SCHEME_PORTS
from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text, parse_nvfp4_rules, read_any_rule_file
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4Order, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, ScaleRule, rule_text

DIVIDE = NVFP4_RULES["te-nvfp4-divide"]
MINE = dataclasses.replace(DIVIDE, name="my-nvfp4", source="TE's divide rule, renamed")


def test_every_nvfp4_rule_reads_back_as_itself_one_file_for_all() -> None:
    rules = tuple(NVFP4_RULES.values())
    assert parse_nvfp4_rules(nvfp4_rule_text(*rules)) == rules


def test_either_kind_of_rule_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "nv.toml").write_text(nvfp4_rule_text(MINE))
    (tmp_path / "scale.toml").write_text(rule_text(RULES["rceil"]))
    assert read_any_rule_file(tmp_path / "nv.toml") == (MINE,)
    (scale,) = read_any_rule_file(tmp_path / "scale.toml")
    assert isinstance(scale, ScaleRule) and scale == RULES["rceil"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('order = "divide"', 'order = "sideways"'), "order = 'sideways'; one of divide"),
        (("clamp_block = true", "clamp_block = 1"), "clamp_block must be true or false"),
        (("clamp_block = true", "clamp_block = true\nwidth = 3"), "unknown key 'width'"),
        (("clamp_block = true\n", ""), "missing key 'clamp_block'"),
        (("block = 16", "block = 0"), "not a positive whole number"),
        (("block = 16", 'block = 16\nblock_bounds = [1.0, "x"]'), "is not a number"),
        (
            ("block = 16", "block_bounds = [1.0]\nblock = 16"),
            "block_bounds must be [number, number]",
        ),
    ],
)
def test_a_malformed_nvfp4_rule_is_refused(edit: tuple[str, str], message: str) -> None:
    text = nvfp4_rule_text(MINE)
    assert edit[0] in text
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_nvfp4_rules(text.replace(edit[0], edit[1], 1))
    with pytest.raises(ValueError, match="a rule name given twice"):
        parse_nvfp4_rules(nvfp4_rule_text(MINE, MINE))


def test_gq_takes_a_custom_nvfp4_rule_and_goes_red_on_a_kernel_it_does_not_describe() -> None:
    right = run_gq(SCHEME_PORTS["te-nvfp4-divide"], scheme="nvfp4", rule=MINE)
    assert right.status is GateStatus.PASS and right.rule == "my-nvfp4" and right.mismatches == 0
    wrong = run_gq(SCHEME_PORTS["torchao-0.18-nvfp4"], scheme="nvfp4", rule=MINE)
    assert wrong.status is GateStatus.FAIL and wrong.mismatches > 0


def test_a_custom_nvfp4_rule_needs_its_element_path_and_a_name_of_its_own() -> None:
    unread = dataclasses.replace(MINE, element_source=None)
    with pytest.raises(ValueError, match="not an nvfp4 rule GQ models"):
        run_gq(SCHEME_PORTS["te-nvfp4-divide"], scheme="nvfp4", rule=unread)
    changed = dataclasses.replace(DIVIDE, order=Nvfp4Order.FUSED)
    with pytest.raises(ValueError, match="give a custom rule a name of its own"):
        run_gq(SCHEME_PORTS["te-nvfp4-divide"], scheme="nvfp4", rule=changed)
    assert isinstance(MINE, Nvfp4ScaleRule)
