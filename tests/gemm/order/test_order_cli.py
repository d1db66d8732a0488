"""``fp8lab order``: text and JSON record; bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.gemm.order import SumTree, sequential_tree, split_k_tree


def test_fp8_kernel_prints_family_and_writes_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "order.json"
    rc = main(["order", "--kernel", "fp8lab.gemm:matmul_vllm_cpp", "--k", "32", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "family: sequential" in text and "calls: 31" in text
    data = json.loads(out.read_text())
    assert data["family"] == "sequential" and data["calls"] == 31 and data["k"] == 32
    assert SumTree.from_json(data["tree"]) == sequential_tree(32)


def test_f32_matmul_callable_names_split_k(capsys: pytest.CaptureFixture[str]) -> None:
    kernel = "fp8lab.refs.gemm_accumulators:split_k"
    argv = ["order", "--kernel", kernel, "--k", "300", "--as", "f32-matmul", "--n", "1"]
    rc = main([*argv, "--json", "-"])
    out = capsys.readouterr().out
    assert rc == 0
    record = json.loads(out[out.index("{") :])
    assert record["family"] == "split_k(chunk=128, parts=3, reduce=sequential)"
    assert SumTree.from_json(record["tree"]) == split_k_tree(300, 128)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--kernel", "fp8lab.gemm:matmul_vllm_cpp", "--k", "30"], "multiples of 16"),
        (["--kernel", "no_such_module:f", "--k", "32"], "cannot import"),
        (["--kernel", "fp8lab.gemm:matmul_vllm_cpp", "--k", "1"], "at least 2"),
        (["--kernel", "fp8lab.gemm:matmul_vllm_cpp", "--k", "32", "--row", "3"], "inside"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["order", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_a_kernel_that_is_not_a_sum_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["order", "--kernel", "numpy:max", "--k", "8", "--as", "sum"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a count" in err


def test_a_fused_model_prints_the_sibling_test_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kernel = "fp8lab.refs.gemm_accumulators:fused"
    out = tmp_path / "fused.json"
    argv = ["order", "--kernel", kernel, "--k", "128", "--as", "f32-matmul", "--n", "1"]
    assert main([*argv, "--m", "16", "--batch", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "family: fused(n=32)" in text and "sibling test: 4 fused nodes settled" in text
    data = json.loads(out.read_text())
    assert data["sibling_nodes"] == 4 and data["sibling_rows"] > 0
