"""``fp8lab order``: text and JSON record; bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.order import SumTree, sequential_tree, split_k_tree

VLLM_CPP = "fp8lab.kernels.matmul:matmul_vllm_cpp"


def test_fp8_kernel_prints_family_and_writes_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "order.json"
    rc = main(
        [
            "order",
            "--kernel",
            VLLM_CPP,
            "--k",
            "32",
            "--json",
            str(out),
        ]
    )
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
        (["--kernel", "no_such_module:f", "--k", "32"], "cannot import"),
        (["--kernel", VLLM_CPP, "--k", "32", "--warmup", "-1"], "warm-up"),
        (["--kernel", VLLM_CPP, "--k", "32", "--batch", "--out-dtype", "bf16"], "--batch"),
        (["--kernel", VLLM_CPP, "--k", "1"], "a number of summands in [2, "),
        (
            ["--kernel", VLLM_CPP, "--k", "32", "--row", "3"],
            "inside",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["order", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_the_multiple_of_16_is_the_seed_kernels_own_refusal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # K = 30 is no usage error of fp8lab order (a user's kernel takes any K); the seed's
    # kernel refuses it itself, which is a fault of that kernel's call: exit 1, one line
    assert main(["order", "--kernel", VLLM_CPP, "--k", "30"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "multiples of 16" in err


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


def test_positions_all_finds_the_row_tiles_and_reproduces_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tiles.json"
    argv = ["order", "--kernel", "tests.order.row_kernels:three_tiles", "--as", "f32-matmul"]
    rc = main(
        [*argv, "--k", "16", "--m", "16", "--n", "4", "--positions", "all", "--json", str(out)]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "class 2: rows 6-11, columns 0-3" in text and "verdict: reproduced" in text
    data = json.loads(out.read_text())
    rows = [sorted({o[0] for o in c["outputs"]}) for c in data["position_classes"]]
    assert rows == [list(range(6)), list(range(6, 12)), list(range(12, 16))]
    assert data["family"] is None and data["outputs_reproduced"] == data["outputs_checked"] == 128
    target = data["host"]["target"]  # measured in the kernel's process: numpy ran it
    assert target["library"] == "numpy" and target["blas"]["library"]
    assert data["verdict"] == "reproduced" and data["first_call"]["differs"] == 0


def test_a_grid_of_positions_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["order", "--kernel", "tests.order.row_kernels:three_tiles", "--as", "f32-matmul"]
    assert main([*argv, "--k", "8", "--m", "16", "--n", "2", "--positions", "7-8:1"]) == 0
    text = capsys.readouterr().out
    assert "class 1: rows 7-8, columns 1" in text and "family: pairwise" in text


def test_an_order_that_is_not_fixed_exits_1_with_its_evidence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["order", "--kernel", "tests.order.row_kernels:by_sign", "--as", "f32-matmul"]
    assert main([*argv, "--k", "16", "--m", "4", "--n", "4", "--positions", "all"]) == 1
    captured = capsys.readouterr()
    assert "verdict: not-fixed" in captured.out
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "no fixed order" in err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--positions", "rows"], "ROWS:COLS"),
        (["--positions", "0-20:*"], "outside 0..15"),
        (["--positions", "a:*"], "not a number"),
        (["--positions", "all", "--batch"], "pick one"),
    ],
)
def test_bad_positions_are_one_line_and_exit_2(
    extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["order", "--kernel", "fp8lab.order.targets:numpy_matmul", "--as", "f32-matmul"]
    assert main([*argv, "--k", "8", "--m", "16", "--n", "4", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


@pytest.mark.parametrize(
    "sizes",
    [
        ["--m", str(2**16), "--n", str(2**16), "--k", "16"],
        ["--k", str(2**24), "--n", str(2**16)],
        ["--n", str(2**16), "--k", str(2**20)],
    ],
)
def test_absurd_sizes_are_refused_before_anything_is_allocated(
    sizes: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["order", "--kernel", "fp8lab.order.targets:numpy_matmul", "--as", "f32-matmul"]
    assert main([*argv, *sizes]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "GiB available" in err
