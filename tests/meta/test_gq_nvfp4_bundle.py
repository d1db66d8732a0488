"""The GQ bundle loop with a real NVFP4 kernel in C++.

``fp8lab export --gate GQ --scheme nvfp4 --rule te-nvfp4-divide`` writes the
calls; ``examples/bundle_runner/run_bundle.cpp`` linked with
``examples/kernels/nvfp4_quant.cpp`` (``-DFP8LAB_NVFP4_QUANT_IS=
te_nvfp4_divide_quant``) writes codes and scales; ``fp8lab gates --gate GQ
--outputs`` PASSes them, and FAILs them when the kernel truncates its e4m3 block
byte (``-DFP8LAB_DEFECT_TRUNC_SCALE``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.kernels.sources.shared_abi import ABI_HEADER
from tests.meta.bundle_helpers import RUNNER

pytestmark = pytest.mark.process

KERNEL = RUNNER.parents[1] / "kernels" / "nvfp4_quant.cpp"
RULE = ["--scheme", "nvfp4", "--rule", "te-nvfp4-divide"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nvfp4bundle") / "b"
    assert main(["export", "--gate", "GQ", *RULE, "--out", str(out)]) == 0
    return out


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the runner)")
@pytest.mark.parametrize(("defect", "status"), [("", "PASS"), ("TRUNC_SCALE", "FAIL")])
def test_the_cpp_runner_with_the_nvfp4_library_closes_the_loop(
    bundle: Path, defect: str, status: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = Path(shutil.copytree(bundle, tmp_path / "b"))
    exe = tmp_path / "run_bundle"
    flags = ["-DFP8LAB_NVFP4_QUANT_IS=te_nvfp4_divide_quant", "-ffp-contract=off"]
    flags += [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    cmd = ["g++", "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{ABI_HEADER.parent}"]
    subprocess.run([*cmd, *flags, str(RUNNER), str(KERNEL), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe), str(mine)], capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "396 of 396 outputs written" in run.stdout, run.stderr
    capsys.readouterr()
    got = main(["gates", "--gate", "GQ", *RULE, "--outputs", str(mine), "--json", "-"])
    out, _ = capsys.readouterr()
    (row,) = json.loads(out[out.index("[") :])
    assert (got, row["status"], row["cases"]) == (0 if status == "PASS" else 1, status, 396)
