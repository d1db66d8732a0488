"""Each library GEMM of examples/gemm (torch, onnxruntime, jax, each optional) is inferred, passes
G3 under the declaration inferred for it and fails under the sequential folded one."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.studies.ecosystem_gemm import GEMM_ROWS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.process


ROWS = [r for r in GEMM_ROWS if r.path != "matmul float16"]  # as bfloat16's; the notebook has it


# Run in a process of its own: a library imported here (jax starts threads) would stay in the
# test worker, and every later fork of it (worker pools) would warn of deadlock.
_CHECK = """
import importlib, json, sys
from fp8lab.gates.g3 import run_g3_report
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel
from fp8lab.order.gemm_infer import infer_gemm
from fp8lab.studies.ecosystem_gemm import GEMM_ROWS, sequential_folded
row = next(r for r in GEMM_ROWS if r.kernel == sys.argv[1] and r.path == sys.argv[2])
name, func = row.kernel.split(":")
kernel = FunctionMatmulKernel(row.path, getattr(importlib.import_module(name), func))
found = infer_gemm(kernel, (2, 16, 16), out=row.out, rowwise=row.rowwise)
decl = found.declaration
foil = run_g3_report(kernel, declaration=sequential_folded(decl)).result
print(json.dumps({
    "library": found.order.host["target"]["library"],
    "status": run_g3_report(kernel, declaration=decl).result.status.value,
    "foil": foil.status.value,
    "foil_mismatches": foil.mismatches,
}))
"""


@pytest.mark.slow(reason="imports torch, onnxruntime and jax in a process of its own (~10 s)")
@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.library}-{r.path}")
def test_a_library_gemm_passes_its_inferred_declaration_only(row: object) -> None:
    for module in row.modules:  # type: ignore[attr-defined]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is in the optional extra gemm")
    argv = [sys.executable, "-c", _CHECK, row.kernel, row.path]  # type: ignore[attr-defined]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["library"] == row.library  # type: ignore[attr-defined]
    assert got["status"] == "PASS"
    assert got["foil"] == "FAIL" and got["foil_mismatches"] > 0
