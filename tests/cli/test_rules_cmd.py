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
from fp8lab.gates.records import GateResult, GateStatus
from fp8lab.specs.gate_options import GateOptions
from fp8lab.specs.gates import Gate
from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text, parse_nvfp4_rules
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES, parse_rules, rule_text
from fp8lab.specs.static_rules import STATIC_RULES
from tests.meta.gates_subprocess import run_gates


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_rule_shown_reads_back_as_itself(name: str) -> None:
    assert parse_rules(rule_text(RULES[name])) == (RULES[name],)


def test_all_rules_in_one_file_read_back() -> None:
    assert parse_rules(rule_text(*RULES.values())) == tuple(RULES.values())


def test_list_names_every_rule_of_every_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list"]) == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()]
    listed = {**GQ_RULES, "static": tuple(STATIC_RULES)}
    assert rows == [[s, n] for s, names in listed.items() for n in names]
    assert main(["rules", "list", "--scheme", "mxfp8"]) == 0
    assert [r.split()[1] for r in capsys.readouterr().out.splitlines()] == list(GQ_RULES["mxfp8"])


def test_show_prints_the_rule_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "show", "rceil"]) == 0
    assert parse_rules(capsys.readouterr().out) == (RULES["rceil"],)
    assert main(["rules", "show", "onnx-quantizelinear-e5m2-nosat"]) == 0
    static = STATIC_RULES["onnx-quantizelinear-e5m2-nosat"]
    assert parse_rules(capsys.readouterr().out) == (static,)


def test_show_splits_prints_every_row_of_the_rules_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fp8lab.populations.split_cache import cached_split_table

    assert main(["rules", "show", "rceil", "--splits"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[:3] for line in lines[2:]]
    assert rows == [[s.axis, s.value, s.status] for s in cached_split_table(RULES["rceil"])]
    assert ["e8m0_exponent", "log2-float32", "split"] in rows


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
        (["infer", "--scheme", "diagonal", "--kernel", "kern:port"], "searches the rules of"),
        (["show", "rceil", "--kernel", "kern:port"], "go with rules infer"),
        (["list", "--splits"], "--splits goes with rules show"),
        (["show", "te-nvfp4-divide", "--splits"], "split tables are for scale rules"),
        (["show", "rceil[pow2=none]", "--splits"], "e8m0fnu scales go with"),
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


def test_a_rule_file_of_one_rule_needs_no_rule_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is read once, and its one rule is the rule (the gate itself is stubbed)."""
    text = rule_text(RULES["vllm-per-token"]).replace('"vllm-per-token"', '"mine"')
    (tmp_path / "one.toml").write_text(text)
    held: list[GateOptions] = []
    ran: list[str] = []

    def stub(gate: Gate, args: object, options: GateOptions) -> list[GateResult]:
        held.append(options)
        ran.append(gate.name)
        return [GateResult(gate.name, "stub", GateStatus.PASS, "", 1, 1, 0, 1, 0, 0)]

    monkeypatch.setattr("fp8lab.cli.gates_cmd._run_gate", stub)
    monkeypatch.setattr("fp8lab.cli.gates_cmd.prestart", lambda args, stack: {})
    argv = ["gates", "--gate", "GQ", "--kernel", "kern:right", "--rule-file"]
    assert main([*argv, str(tmp_path / "one.toml")]) == 0, capsys.readouterr()
    ((choice,),) = [options.schemes for options in held]
    assert (choice.scheme, choice.rule.name) == ("per-token", "mine")
    assert main(["gates", "--gate", "all", *argv[3:], str(tmp_path / "one.toml")]) == 0
    assert ran.count("GQ") == 2 and all(o.schemes == held[0].schemes for o in held)
    two = rule_text(RULES["vllm-per-token"], RULES["vllm-native-per-token"])
    (tmp_path / "two.toml").write_text(two.replace('"vllm-', '"my-'))
    assert main([*argv, str(tmp_path / "two.toml")]) == 2
    err = capsys.readouterr().err
    assert "name one of its rules with --rule: my-per-token, my-native-per-token" in err


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
