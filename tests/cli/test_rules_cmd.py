"""``fp8lab rules``: every named rule listed, and shown as a rule file that reads back as itself.

``rules show NAME`` prints the TOML ``--rule-file`` reads: parsed back it is the
same rule, for every rule of the data file and every NVFP4 rule; renamed, it
holds a kernel under GQ as the original does. An unknown name or a missing one
is one line and status 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.gates.gq import GQ_RULES
from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text, parse_nvfp4_rules
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES, parse_rules, rule_text
from tests.meta.gates_subprocess import run_gates


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_rule_shown_reads_back_as_itself(name: str) -> None:
    assert parse_rules(rule_text(RULES[name])) == (RULES[name],)


def test_all_rules_in_one_file_read_back() -> None:
    assert parse_rules(rule_text(*RULES.values())) == tuple(RULES.values())


def test_list_names_every_rule_of_every_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list"]) == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()]
    assert rows == [[s, n] for s, names in GQ_RULES.items() for n in names]
    assert main(["rules", "list", "--scheme", "mxfp8"]) == 0
    assert [r.split()[1] for r in capsys.readouterr().out.splitlines()] == list(GQ_RULES["mxfp8"])


def test_show_prints_the_rule_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "show", "rceil"]) == 0
    assert parse_rules(capsys.readouterr().out) == (RULES["rceil"],)


@pytest.mark.parametrize("name", sorted(NVFP4_RULES))
def test_an_nvfp4_rule_shown_reads_back_as_itself(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "show", name]) == 0
    assert parse_nvfp4_rules(capsys.readouterr().out) == (NVFP4_RULES[name],)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "no-such-rule"], "unknown rule"),
        (["show"], "one rule NAME"),
        (["list", "ocp-floor"], "takes no NAME"),
        (["list", "--scheme", "diagonal"], "unknown scheme"),
        (["infer", "--scheme", "per-token"], "--kernel MODULE:FUNC"),
        (["infer", "--kernel", "kern:port"], "--scheme S"),
        (["infer", "--scheme", "diagonal", "--kernel", "kern:port"], "varies the scale rules"),
        (["show", "rceil", "--kernel", "kern:port"], "go with rules infer"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.process
def test_a_shown_rule_renamed_holds_a_kernel_as_the_original(tmp_path: Path) -> None:
    text = rule_text(RULES["vllm-per-token"]).replace('"vllm-per-token"', '"my-per-token"')
    (tmp_path / "mine.toml").write_text(text)
    (tmp_path / "kern.py").write_text(
        "from fp8lab.kernels.scheme import SCHEME_PORTS\n"
        "right = SCHEME_PORTS['vllm-per-token']\n"
        "wrong = SCHEME_PORTS['vllm-native-per-token']\n"
    )
    argv = ["--gate", "GQ", "--rule-file", "mine.toml", "--rule", "my-per-token"]
    right = run_gates(tmp_path, *argv, "--kernel", "kern:right")
    assert right.returncode == 0, right.stdout + right.stderr
    wrong = run_gates(tmp_path, *argv, "--kernel", "kern:wrong")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout, wrong.stdout + wrong.stderr


@pytest.mark.process
def test_a_shown_nvfp4_rule_renamed_holds_a_kernel_as_the_original(tmp_path: Path) -> None:
    text = nvfp4_rule_text(NVFP4_RULES["te-nvfp4-divide"]).replace('"te-nvfp4-divide"', '"mine"')
    (tmp_path / "mine.toml").write_text(text)
    (tmp_path / "kern.py").write_text(
        "from fp8lab.kernels.scheme import SCHEME_PORTS\n"
        "right = SCHEME_PORTS['te-nvfp4-divide']\n"
        "wrong = SCHEME_PORTS['torchao-0.18-nvfp4']\n"
    )
    argv = ["--gate", "GQ", "--scheme", "nvfp4", "--rule-file", "mine.toml", "--rule", "mine"]
    right = run_gates(tmp_path, *argv, "--kernel", "kern:right")
    assert right.returncode == 0 and "rule mine" in right.stdout, right.stdout + right.stderr
    wrong = run_gates(tmp_path, *argv, "--kernel", "kern:wrong")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout, wrong.stdout + wrong.stderr
    (tmp_path / "same.toml").write_text(nvfp4_rule_text(NVFP4_RULES["te-nvfp4-divide"]))
    argv = ["--gate", "GQ", "--rule-file", "same.toml", "--rule", "te-nvfp4-divide"]
    taken = run_gates(tmp_path, *argv, "--kernel", "kern:right")
    assert taken.returncode == 2 and "built-in rule's name" in taken.stderr, taken.stderr
