"""``--kernel MODULE:OBJ`` takes protocol objects as well as functions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.kernels import FunctionKernel, QuantKernel

pytestmark = pytest.mark.process


def test_a_quant_kernel_object_is_used_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.json"
    argv = ["gates", "--kernel", "tests.meta.cli_kernels:KEEP_SIGN_OBJECT", "--json", str(out)]
    assert main([*argv, "--nan-policy", "keep-sign"]) == 0, capsys.readouterr()
    row = json.loads(out.read_text())[0]
    assert row["kernel"] == "keep_sign_object" and row["nan_policy"] == "keep-sign"
    assert row["nan_policy_declared_by_kernel"] == "keep-sign"  # recorded, and agreeing
    undeclared = ["gates", "--kernel", "tests.meta.cli_kernels:UNDECLARED_OBJECT"]
    assert main(undeclared) == 1
    assert main([*undeclared, "--nan-policy", "keep-sign"]) == 0
    assert "undeclared_object" in capsys.readouterr().out


def test_a_matmul_kernel_is_held_to_the_model_its_source_or_the_command_states(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Its source states the two-scalar epilogue in literals: read as text, it is the model.
    stated = "tests.meta.cli_kernels:UPSTREAM_STATED"
    assert main(["gates", "--gate", "G3", "--kernel", stated]) == 0, capsys.readouterr()
    # This object's spec is computed (a built-in's): only its process says so, which is
    # recorded and not believed, so G3 holds it to vllm.cpp's folded model and it fails...
    claimed = "tests.meta.cli_kernels:UPSTREAM_MATMUL_OBJECT"
    record = tmp_path / "g3.json"
    assert main(["gates", "--gate", "G3", "--kernel", claimed, "--json", str(record)]) == 1
    row = json.loads(record.read_text())[0]
    assert row["measured"]["claimed_model"].startswith("sequential accumulation, two_scalar")
    assert row["reason"].endswith("model: sequential accumulation, folded epilogue")
    # ...until the command line states the model.
    assert main(["gates", "--gate", "G3", "--kernel", claimed, "--gemm", "upstream"]) == 0
    assert main(["gates", "--gate", "G3", "--kernel", "fp8lab.kernels.matmul:matmul_upstream"]) == 1


@pytest.mark.parametrize(
    ("spec", "gate"),
    [
        ("fp8lab:FORMATS", "G1"),
        ("tests.meta.cli_kernels:KEEP_SIGN_OBJECT", "G3"),
        ("tests.meta.cli_kernels:STRING_SPEC_MATMUL", "G3"),
    ],
)
def test_an_object_of_the_wrong_kind_is_a_usage_error(
    spec: str, gate: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gates", "--gate", gate, "--kernel", spec]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("Kernel" in err[0] or "MatmulSpec" in err[0])


def test_detect_takes_a_quant_kernel_object(capsys: pytest.CaptureFixture[str]) -> None:
    pair = "reciprocal,tests.meta.cli_kernels:KEEP_SIGN_OBJECT"
    window = ["--start", "0x3f800000", "--stop", "0x3f800100", "--workers", "1", "--quiet"]
    argv = ["detect", "--scales", "0.13", "--kernels", pair, "--method", "brute", *window]
    assert main(argv) == 0, capsys.readouterr()
    assert "0 exposing" in capsys.readouterr().out


def test_quant_kernel_protocol_is_name_and_quantize() -> None:
    class Minimal:
        name = "minimal"

        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            return np.zeros(np.shape(x), np.uint8)

    assert isinstance(Minimal(), QuantKernel)
    wrapped = FunctionKernel("f", lambda x, s: np.zeros(np.shape(x), np.uint8))
    assert wrapped.encode(np.array([2.0], np.float32)).tolist() == [0]
