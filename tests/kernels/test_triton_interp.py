"""Triton kernels on the CPU: the interpreter's float8 conversion replaced by the hardware's.

The replaced conversion equals the scan reference on every pattern of two
binades and every special value; the stock one does not (the meta test: it
drops the carry out of the significand, 1.9375 -> 1.0). A vLLM-style Triton
per-token-group kernel passes GQ from the command line with ``--arrays
triton`` and its reciprocal twin fails; without triton, ``--arrays triton``
is one line and status 2. The 2^32 proofs are the ``triton_interpreter``
notebook's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.kernels.sources import triton_interp
from fp8lab.studies.triton_interp import (
    INTERPRETER_PROOFS,
    expected,
    expected_verdicts,
    interpreter_proofs,
)
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun
from tests.conftest import needs
from tests.in_process import run_main

pytestmark = [pytest.mark.process, needs("triton", "torch", extra="triton")]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "triton"
SPECIALS = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448.0, 464.0, 465.0, 1e30])


@pytest.mark.parametrize(("fmt", "name"), [("e4m3fn", "e4m3fn"), ("e5m2", "e5m2")])
def test_the_replaced_conversion_is_the_hardwares(fmt: str, name: str) -> None:
    x = np.concatenate(
        [
            np.arange(0x3F000000, 0x40000000, 61, dtype=np.uint32).view(np.float32),
            SPECIALS,
            -SPECIALS,
        ]
    )
    got = getattr(triton_interp, f"hardware_{name}")(x)
    want = encode(x, fmt, saturate=True, nan="canonical")
    want[np.isnan(x)] = 0x7F  # the GPU's NaN in both formats (0x7E is e5m2's canonical one)
    assert np.array_equal(got, want)


def test_the_stock_conversion_drops_the_carry() -> None:
    x = np.float32([1.9375])
    assert triton_interp.stock_e4m3fn(x)[0] == 0x38  # 1.0: the interpreter's own conversion
    assert triton_interp.hardware_e4m3fn(x)[0] == 0x40  # 2.0: round to nearest even


def test_the_proofs_pass_replaced_and_fail_stock_on_a_binade() -> None:
    run = RangeRun(start=0x3F800000, stop=0x40000000, workers=1)
    records = interpreter_proofs(run)
    whats = [what for *_, what in INTERPRETER_PROOFS]
    assert all(expected(r, what) for r, what in zip(records, whats, strict=True))
    assert [r.status.value for r in records] == ["PASS", "PASS", "FAIL"]
    assert all(r.examined == 1 << 23 for r in records)
    assert records[-1].mismatches > 0 and records[-1].mismatches_by_class["other"] > 0


def test_the_e5m2_conversion_is_all_ones_nan_and_only_that() -> None:
    """Under its policy it agrees at NaN; under the canonical one every NaN input differs."""
    run = RangeRun(start=0x7F000000, stop=0x80000000, workers=1)
    encoder = INTERPRETER_PROOFS[1][0]
    ones = run_exhaustive(encoder, "scan", "e5m2", saturate=True, nan="all-ones", run=run)
    assert ones.status.value == "PASS" and expected(ones, "agrees")
    canonical = run_exhaustive(encoder, "scan", "e5m2", saturate=True, nan="canonical", run=run)
    nans = (1 << 23) - 1  # the patterns 0x7F800001..0x7FFFFFFF
    assert canonical.mismatches == 0 and canonical.nan_code_mismatches == nans


def test_the_expected_fail_is_the_stock_conversion() -> None:
    assert [(n["a"].rsplit(":", 1)[1], n["format"]) for n in expected_verdicts()] == [
        ("stock_e4m3fn", "e4m3fn")
    ]


def _gates(kernel: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``fp8lab gates`` on a kernel of the example folder: in this process, or in one of its
    own with ``env`` as its whole environment."""
    args = ["gates", "--gate", "GQ", "--scheme", "per-group", "--rule", "vllm-per-group"]
    args += ["--kernel", kernel, "--arrays", "triton"]
    if env is None:
        return run_main(args, cwd=EXAMPLE, path=[EXAMPLE])
    return subprocess.run(
        [sys.executable, "-m", "fp8lab", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=EXAMPLE,
        env=env,
        timeout=600,
    )


def test_the_triton_example_passes_gq_and_its_reciprocal_twin_fails() -> None:
    good = _gates("my_triton_quant:quant")
    assert good.returncode == 0 and "PASS" in good.stdout, good.stdout + good.stderr
    assert "RuntimeWarning" not in good.stderr
    bad = _gates("my_triton_quant:quant_reciprocal")
    assert bad.returncode == 1 and "FAIL" in bad.stdout, bad.stdout + bad.stderr


def test_a_kernel_that_divides_float32_with_a_slash_is_told_once(tmp_path: Path) -> None:
    source = (EXAMPLE / "my_triton_quant.py").read_text()
    slash = source.replace("tl.math.div_rn(absmax, fp8_max)", "absmax / fp8_max")
    (tmp_path / "slash_quant.py").write_text(slash)
    args = ["gates", "--gate", "GQ", "--scheme", "per-group", "--rule", "vllm-per-group"]
    args += ["--arrays", "triton", "--kernel", "slash_quant:quant"]
    proc = run_main(args, cwd=tmp_path, path=[tmp_path])
    assert proc.returncode == 0, proc.stdout + proc.stderr  # exact division here: the rule's
    assert proc.stderr.count(triton_interp.DIVISION_NOTE) == 1


def test_without_triton_arrays_triton_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "triton").mkdir()
    (tmp_path / "triton" / "__init__.py").write_text("raise ImportError('no triton here')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    proc = _gates("my_triton_quant:quant", env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "pip install 'fp8lab[triton]'" in proc.stderr
