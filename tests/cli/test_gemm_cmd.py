"""``fp8lab gemm`` and G3's GEMM flags: list, show, infer, --gemm-file, --order-from, usage."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.specs.gemm_decl import GEMMS, parse_gemms

PLANTED = "tests.gemm.planted_kernels:product_scaled"


def test_list_names_every_declaration_and_show_prints_one_that_reads_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["gemm", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in GEMMS)
    assert main(["gemm", "show", "product_scaled"]) == 0
    assert parse_gemms(capsys.readouterr().out) == (GEMMS["product_scaled"],)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["gemm", "show", "nope"], "one of"),
        (["gemm", "infer"], "--kernel"),
        (["gemm", "list", "--kernel", PLANTED], "go with gemm infer"),
        (["gemm", "infer", "--kernel", PLANTED, "--k", "1"], "summands in [2, "),
        (["gates", "--gate", "G3", "--gemm", "nope"], "unknown --gemm"),
        (["gates", "--gate", "G3", "--gemm-file", "/no/such.toml"], "cannot read"),
        (["gates", "--gate", "G3", "--order-from", "/no/such.json"], "--order-from"),
        (["gates", "--gate", "G3", "--warmup", "-1"], "--warmup"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_an_order_record_that_is_not_fixed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "o.json"
    record.write_text(json.dumps({"probe": "fp8_matmul", "verdict": "not-fixed"}))
    assert main(["gates", "--gate", "G3", "--order-from", str(record)]) == 2
    assert "reproduced" in capsys.readouterr().err


@pytest.mark.process
def test_infer_writes_a_declaration_that_g3_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fp8lab.gates.g3 import run_g3_report
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
    from fp8lab.specs.gemm_decl import read_gemm_file
    from tests.gemm.planted_kernels import product_scaled

    decl, rec = tmp_path / "g.toml", tmp_path / "infer.json"
    shape = ["--m", "4", "--n", "16", "--k", "32"]
    assert main(["gemm", "infer", "--kernel", PLANTED, *shape, "--write-gemm", str(decl),
                 "--json", str(rec)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "scales: product (a-first)" in text and "output: float32, rounded once" in text
    host = json.loads(rec.read_text())["order"]["host"]["target"]  # the kernel's process
    assert host["library"] == "numpy" and host["blas"]["library"]
    (written,) = read_gemm_file(decl)
    assert written.scales == "product" and written.shapes == ((4, 16, 32),)
    kernel = FunctionMatmulKernel("product_scaled", product_scaled)
    assert run_g3_report(kernel, declaration=written).result.status.value == "PASS"
    assert main(["gemm", "infer", "--kernel", PLANTED, *shape, "--write-gemm", str(decl)]) == 2


def test_order_from_checks_the_classes_an_order_record_holds(tmp_path: Path) -> None:
    from fp8lab.cli.gemm_args import gemm_options
    from fp8lab.gates.g3 import run_g3_report
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
    from fp8lab.order import Fp8MatmulProbe
    from fp8lab.order.per_position import infer_positions
    from tests.gemm.planted_kernels import bf16_once, product_scaled

    for func, out, epilogue, scales in (
        (product_scaled, "f32", "product_scaled", "product"),
        (bf16_once, "bf16", "sequential_bf16_once", "none"),
    ):
        kernel = FunctionMatmulKernel(func.__name__, func)
        record = infer_positions(Fp8MatmulProbe(kernel, 32, 4, 16, out=out), "k")
        path = tmp_path / f"{out}.json"
        path.write_text(json.dumps(record.to_json()))
        args = argparse.Namespace(warmup=1, gemm=epilogue, gemm_file=None, order_from=str(path))
        options = gemm_options(args)
        decl = options["declaration"]
        assert decl.scales == scales and decl.outputs == (out,) and decl.shapes == ((4, 16, 32),)
        assert run_g3_report(kernel, **options).result.status.value == "PASS"
        wrong = gemm_options(argparse.Namespace(**{**vars(args), "gemm": "vllm_cpp"}))
        assert run_g3_report(kernel, **wrong).result.status.value == "FAIL"
