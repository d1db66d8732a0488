"""torchao's float8 quantizers, called as torchao calls them, under the rules named after them.

With torch and torchao installed (the ``ecosystem`` extra), each passes GQ
under its torchao rule and fails under the vLLM rule of its scheme, from the
command line with ``--arrays torch``. Skipped, with the reason, without them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.meta.gates_subprocess import run_gates

pytest.importorskip("torch", reason="torch is not installed (optional: the ecosystem extra)")
pytest.importorskip("torchao", reason="torchao is not installed (optional: the ecosystem extra)")

pytestmark = pytest.mark.process

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchao"


def _gq(scheme: str, rule: str, kernel: str) -> subprocess.CompletedProcess[str]:
    argv = ["--gate", "GQ", "--scheme", scheme, "--rule", rule, "--kernel", kernel]
    return run_gates(EXAMPLE, *argv, "--arrays", "torch")


@pytest.mark.parametrize(
    ("scheme", "own", "other", "kernel"),
    [
        ("per-tensor", "torchao-0.18-float8-tensorwise", "vllm-per-tensor", "tensorwise"),
        ("per-token", "torchao-0.18-float8-rowwise", "vllm-native-per-token", "rowwise"),
    ],
)
def test_torchao_passes_its_rule_and_fails_vllms(
    scheme: str, own: str, other: str, kernel: str
) -> None:
    right = _gq(scheme, own, f"torchao_float8:{kernel}")
    assert right.returncode == 0 and "PASS" in right.stdout, right.stdout + right.stderr
    wrong = _gq(scheme, other, f"torchao_float8:{kernel}")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout, wrong.stdout + wrong.stderr
