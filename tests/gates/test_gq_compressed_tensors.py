"""compressed-tensors' dynamic FP8 quantizers, called as it calls them, under its own rules.

With torch and compressed-tensors installed (the ``ecosystem`` extra), each
passes GQ under its compressed-tensors rule and fails under the vLLM rule of
its scheme, from the command line with ``--arrays torch``. Skipped, with the
reason, without them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.meta.gates_subprocess import run_gates

pytest.importorskip("torch", reason="torch is not installed (optional: the ecosystem extra)")
pytest.importorskip(
    "compressed_tensors",
    reason="compressed-tensors is not installed (optional: the ecosystem extra)",
)

pytestmark = pytest.mark.process

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compressed_tensors"


def _gq(scheme: str, rule: str, kernel: str) -> subprocess.CompletedProcess[str]:
    argv = ["--gate", "GQ", "--scheme", scheme, "--rule", rule, "--kernel", kernel]
    return run_gates(EXAMPLE, *argv, "--arrays", "torch")


@pytest.mark.parametrize(
    ("scheme", "own", "other", "kernel"),
    [
        ("per-tensor", "compressed-tensors-0.20-tensor", "vllm-per-tensor", "tensor"),
        ("per-token", "compressed-tensors-0.20-token", "vllm-native-per-token", "token"),
        ("per-group", "compressed-tensors-0.20-group-128", "vllm-per-group", "group_128"),
        ("per-token", "compressed-tensors-0.20-channel", "vllm-native-per-token", "channel"),
    ],
)
def test_compressed_tensors_passes_its_rule_and_fails_vllms(
    scheme: str, own: str, other: str, kernel: str
) -> None:
    right = _gq(scheme, own, f"compressed_tensors_fp8:{kernel}")
    assert right.returncode == 0 and "PASS" in right.stdout, right.stdout + right.stderr
    wrong = _gq(scheme, other, f"compressed_tensors_fp8:{kernel}")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout, wrong.stdout + wrong.stderr
