"""``fp8lab rules infer`` recovers the libraries' rules from the libraries themselves.

torchao's float8 and compressed-tensors' FP8 quantizers (``examples/``), run
as black boxes with ``--arrays torch``: inference names each library's own
rule. Skipped, with the reason, without the ``ecosystem`` extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is not installed (optional: the ecosystem extra)")
pytest.importorskip("torchao", reason="torchao is not installed (optional: the ecosystem extra)")
pytest.importorskip(
    "compressed_tensors",
    reason="compressed-tensors is not installed (optional: the ecosystem extra)",
)

pytestmark = [pytest.mark.process, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("example", "scheme", "kernel", "rule"),
    [
        ("torchao", "per-tensor", "torchao_float8:tensorwise", "torchao-0.18-float8-tensorwise"),
        ("torchao", "per-token", "torchao_float8:rowwise", "torchao-0.18-float8-rowwise"),
        (
            "compressed_tensors",
            "per-token",
            "compressed_tensors_fp8:token",
            "compressed-tensors-0.20-token",
        ),
        (
            "compressed_tensors",
            "per-group",
            "compressed_tensors_fp8:group_128",
            "compressed-tensors-0.20-group-128",
        ),
    ],
)
def test_inference_names_the_librarys_own_rule(
    example: str, scheme: str, kernel: str, rule: str
) -> None:
    argv = ["rules", "infer", "--scheme", scheme, "--kernel", kernel, "--arrays", "torch"]
    done = subprocess.run(
        [sys.executable, "-m", "fp8lab", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=EXAMPLES / example,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"inferred: {rule}'s own declaration" in done.stdout, done.stdout
