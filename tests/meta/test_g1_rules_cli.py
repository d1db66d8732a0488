"""``fp8lab gates --gate G1 --rule NAME | --rule-file F --rule NAME``: through the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.specs.scale_rules import RULES, rule_text
from fp8lab.specs.static_rules import STATIC_RULES

KERNELS = """
import ml_dtypes
import numpy as np


def divide(x, scale):
    with np.errstate(all="ignore"):
        q = np.clip(x.astype(np.float32) / np.float32(scale), -448, 448)
    return q.astype(ml_dtypes.float8_e4m3fn)


def e5m2(x, scale):
    with np.errstate(all="ignore"):
        return (x.astype(np.float32) / np.float32(scale)).astype(ml_dtypes.float8_e5m2)
"""


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("g1rules")
    (root / "g1k.py").write_text(KERNELS)
    mine = STATIC_RULES["onnx-quantizelinear-e4m3fn"]
    text = rule_text(mine).replace(f'name = "{mine.name}"', 'name = "mine"')
    (root / "mine.toml").write_text(text)
    dynamic = rule_text(RULES["vllm-per-tensor"])
    (root / "dynamic.toml").write_text(dynamic.replace('name = "vllm-per-tensor"', 'name = "dyn"'))
    return root


def test_a_named_rule_without_a_kernel_runs_its_port(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gates", "--gate", "G1", "--rule", "onnx-quantizelinear-e5m2-nosat"]) == 0
    assert "G1 onnx-quantizelinear-e5m2-nosat: rule onnx-quantizelinear-e5m2-nosat" in (
        capsys.readouterr().out
    )


@pytest.mark.process
def test_a_divide_kernel_passes_its_rule_file_and_is_named_under_the_seed(
    kernel_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(kernel_dir))
    rules = ["--rule-file", str(kernel_dir / "mine.toml"), "--rule", "mine"]
    assert main(["gates", "--gate", "G1", *rules, "--kernel", "g1k:divide"]) == 0
    capsys.readouterr()
    out = kernel_dir / "seed.json"
    argv = ["gates", "--gate", "G1", "--kernel", "g1k:divide", "--json", str(out)]
    assert main([*argv, "--nan-policy", "keep-sign"]) == 1
    assert (
        "your kernel divides (x / s): --rule onnx-quantizelinear-e4m3fn" in capsys.readouterr().out
    )
    record = json.loads(out.read_text())[0]
    assert record["rule"] == "vllm-cpp-static"
    assert record["measured"]["explained_by"]["rule"] == "onnx-quantizelinear-e4m3fn"


@pytest.mark.process
def test_codes_of_another_format_are_one_line(
    kernel_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(kernel_dir))
    argv = ["gates", "--gate", "G1", "--rule", "onnx-quantizelinear-e4m3fn", "--kernel", "g1k:e5m2"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    reason = [line for line in out.splitlines() if ": FAIL: " in line]
    assert len(reason) == 1 and "kernel returned float8_e5m2 codes" in reason[0]
    assert "(every case: 14)" in reason[0]


def test_a_rule_of_the_other_gate_is_one_usage_line(
    kernel_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dyn = ["--rule-file", str(kernel_dir / "dynamic.toml"), "--rule", "dyn"]
    assert main(["gates", "--gate", "G1", *dyn, "--kernel", "g1k:divide"]) == 2
    assert "GQ checks it" in capsys.readouterr().err
    mine = ["--rule-file", str(kernel_dir / "mine.toml"), "--rule", "mine"]
    argv = ["gates", "--gate", "GQ", "--scheme", "per-tensor", *mine, "--kernel", "g1k:divide"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--rule applies to G1 only" in err and len(err.strip().splitlines()) == 1
