"""torch kernels as they are: ``--arrays torch`` (or ``arrays = "torch"``) hands them tensors.

The natural torch kernel, ``(x.float() * (1/s)).clamp(-448, 448).to(torch.float8_e4m3fn)``,
passes G1 with no wrapper (torch's cast keeps a NaN's sign: ``--nan-policy
keep-sign``), and its divide twin fails, as does the same kernel computing in
the input's bfloat16; a per-token torch kernel
passes GQ under ``vllm-native-per-token``. Without torch, asking for it is one
usage line (exit 2), never a traceback. torch is optional: the tests that
need it skip without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.meta.gates_subprocess import run_gates

pytestmark = pytest.mark.process

KERNELS = """
import torch


def reciprocal(x, s):
    return (x.float() * (1 / s)).clamp(-448, 448).to(torch.float8_e4m3fn)


def divide(x, s):
    return (x.float() / s).clamp(-448, 448).to(torch.float8_e4m3fn)


def in_bfloat16(x, s):  # the arithmetic in the input's dtype: two roundings for bf16 inputs
    return (x * (1 / s)).clamp(-448, 448).to(torch.float8_e4m3fn)


def declared(x, s):
    return reciprocal(x, s)


declared.arrays = "torch"
declared.nan_policy = "keep-sign"


def per_token(x):
    x = x.float()
    amax = x.abs().amax(dim=-1, keepdim=True)
    scale = (amax / 448.0).clamp(min=1.0 / (448.0 * 512.0))
    y = (x * scale.reciprocal()).clamp(-448, 448)
    y = torch.where(y.isnan(), y.abs(), y)  # inf * 0 is -NaN on x86; the rule's NaN is +NaN
    return y.to(torch.float8_e4m3fn), scale.reshape(-1)
"""


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("torch_kernels")
    (tmp / "tk.py").write_text(KERNELS)
    return tmp


def test_asking_for_torch_without_it_is_one_usage_line(tmp_path: Path) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    (tmp_path / "plain.py").write_text("def q(x, s):\n    return x\n")
    proc = run_gates(tmp_path, "--gate", "G1", "--kernel", "plain:q", "--arrays", "torch")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--arrays torch needs torch" in lines[0]


def test_an_unknown_arrays_attribute_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "odd.py").write_text("def q(x, s):\n    return x\n\n\nq.arrays = 'jax'\n")
    proc = run_gates(tmp_path, "--gate", "G1", "--kernel", "odd:q")
    assert proc.returncode == 2 and "arrays = 'jax'" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("kernel", "flags", "status"),
    [
        ("reciprocal", ("--arrays", "torch", "--nan-policy", "keep-sign"), 0),
        ("divide", ("--arrays", "torch", "--nan-policy", "keep-sign"), 1),
        ("in_bfloat16", ("--arrays", "torch", "--nan-policy", "keep-sign"), 1),
        ("declared", (), 0),
    ],
)
def test_torch_g1_kernels_as_written(
    kernel_dir: Path, kernel: str, flags: tuple[str, ...], status: int
) -> None:
    pytest.importorskip("torch", reason="torch is not installed (optional: the torch extra)")
    proc = run_gates(kernel_dir, "--gate", "G1", "--kernel", f"tk:{kernel}", *flags)
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert ("PASS" if status == 0 else "FAIL") in proc.stdout


def test_a_torch_per_token_kernel_passes_gq(kernel_dir: Path) -> None:
    pytest.importorskip("torch", reason="torch is not installed (optional: the torch extra)")
    argv = ["--gate", "GQ", "--scheme", "per-token", "--rule", "vllm-native-per-token"]
    proc = run_gates(kernel_dir, *argv, "--kernel", "tk:per_token", "--arrays", "torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tensors_cross_bit_for_bit() -> None:
    pytest.importorskip("torch", reason="torch is not installed (optional: the torch extra)")
    import ml_dtypes
    import torch

    from fp8lab.kernels.sources.torch_arrays import from_torch, to_torch

    x = np.array([1.5, -0.0, np.nan, 3e-39], np.float32)
    bf = x.astype(ml_dtypes.bfloat16)
    tx, tbf, ts = to_torch((x, bf, np.float32(0.035)), "cpu")
    assert tbf.dtype == torch.bfloat16 and ts.shape == () and ts.dtype == torch.float32
    back = from_torch((tx, tbf, tx.to(torch.float8_e4m3fn), tx.to(torch.float8_e5m2)))
    assert back[0].tobytes() == x.tobytes() and back[1].tobytes() == bf.tobytes()
    # a float8 tensor keeps its format, so a gate tells e5m2 codes from e4m3fn ones
    assert back[2].dtype == ml_dtypes.float8_e4m3fn and back[2].shape == x.shape
    assert back[3].dtype == ml_dtypes.float8_e5m2
    assert (
        back[2].view(np.uint8).tobytes()
        == tx.to(torch.float8_e4m3fn).view(torch.uint8).numpy().tobytes()
    )
