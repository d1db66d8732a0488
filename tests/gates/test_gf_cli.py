"""``fp8lab gates --gate GF``: the fixed names, exit statuses and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main

CPP = "vllm-cpp-standalone-rmsnorm-fp8"


def _gf(*argv: str) -> list[str]:
    return ["gates", "--gate", "GF", *argv]


def test_builtin_ports_of_one_chain_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_gf("--chain", "rmsnorm")) == 0
    out = capsys.readouterr().out
    assert out.count(" PASS ") == 5 and "bytes differ from the standalone sequence" in out


def test_a_foreign_kernel_runs_in_a_child_and_reports_json(tmp_path: Path) -> None:
    path = tmp_path / "gf.json"
    kernel = "tests.meta.chain_defects:ordinary_rmsnorm"
    args = _gf("--chain", "rmsnorm", "--recipe", CPP, "--kernel", kernel, "--json", str(path))
    assert main(args) == 0
    row = json.loads(path.read_text())[0]
    assert row["gate"] == "GF" and row["status"] == "PASS" and row["words"] > 0
    assert row["measured"]["recipe"] == CPP and row["measured"]["prefix_steps_checked"] == []
    silu = "tests.meta.chain_defects:ordinary_silu_mul"
    recipe = "vllm-cpp-standalone-silu-mul-fp8"
    assert main(_gf("--chain", "silu-mul", "--recipe", recipe, "--kernel", silu)) == 0


def test_a_defective_foreign_kernel_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    kernel = "tests.meta.chain_defects:eps_outside_rmsnorm"
    assert main(_gf("--chain", "rmsnorm", "--recipe", CPP, "--kernel", kernel)) == 1
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        _gf("--recipe", "no-such-recipe"),
        _gf("--chain", "silu-mul", "--recipe", CPP),
        _gf("--kernel", "tests.meta.chain_defects:ordinary_rmsnorm"),
        _gf("--chain", "rmsnorm", "--kernel", "tests.meta.chain_defects:ordinary_rmsnorm"),
        _gf("--chain", "rmsnorm", "--recipe", CPP, "--kernel", "tests.meta.chain_defects:CPP"),
        ["gates", "--gate", "G1", "--chain", "rmsnorm"],
        _gf("--nan-policy", "canonical", "--kernel", "fp8lab:quant_static"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    assert status == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2
