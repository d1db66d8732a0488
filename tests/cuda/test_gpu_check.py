"""scripts/gpu-check without a GPU: G2 PENDING with its reason, recorded and filed, exit 3."""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
import types
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fp8lab.cuda.device import CudaProbe
from fp8lab.gates import run_g2
from tests.cuda.conftest import FakeCupy, host_library, needs_gxx

pytestmark = pytest.mark.process

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu-check"


def run_blocked(tmp_path: Path, *blocked: str) -> subprocess.CompletedProcess[str]:
    """The script in a child where ``blocked`` modules cannot be imported."""
    lines = ["import runpy, sys"]
    lines += [f"sys.modules[{name!r}] = None" for name in blocked]
    lines += [
        f"sys.argv = ['gpu-check', {str(tmp_path)!r}, '--no-install']",
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')",
    ]
    return subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True)


def load_script() -> ModuleType:
    loader = SourceFileLoader("gpu_check", str(SCRIPT))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_gpu_check_writes_and_files_a_pending_record_without_cupy(tmp_path: Path) -> None:
    # As on a bare GPU image: no cupy, and neither psutil nor matplotlib.
    done = run_blocked(tmp_path, "cupy", "psutil", "matplotlib")
    assert done.returncode == 3, done.stderr
    record = json.loads((tmp_path / "gpu-check.json").read_text())
    assert record["schema"] == "fp8lab.gpu-check/1" and record["probe"]["missing"] == "cupy"
    assert record["g2"]["status"] == "PENDING" and record["g2"]["words"] == 0
    assert "missing cupy" in record["g2"]["reason"] and "g2_wall_s" in record["timing"]
    assert record["install"] == {"action": "skipped", "reason": "--no-install"}
    # PENDING is owed work: filed as partial, never beside the complete runs.
    (run,) = (tmp_path / "results" / "partial" / "gate_g2").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "partial" and manifest["summary"]["status"] == "PENDING"
    assert json.loads((run / "gpu-check.json").read_text()) == record
    assert not (tmp_path / "results" / "gate_g2").exists()


def test_a_crash_files_the_run_as_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = load_script()

    def crash(install: dict[str, object]) -> Any:
        raise RuntimeError("planted crash")

    monkeypatch.setattr(script, "check", crash)
    with pytest.raises(RuntimeError, match="planted crash"):
        script.main([str(tmp_path), "--no-install"])
    (run,) = (tmp_path / "results" / "failed" / "gate_g2").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "planted crash" in manifest["reason"]
    assert not (tmp_path / "gpu-check.json").exists()


def test_install_pins_the_cuda_extra_and_prefers_carried_wheels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = load_script()
    (tmp_path / "constraints.txt").write_text("numpy==2.0\ncupy-cuda12x==14.2.0\n")
    (tmp_path / ".whl").mkdir()
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setitem(sys.modules, "cupy", None)
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: no matching distribution\n")

    monkeypatch.setattr(script.subprocess, "run", fake_run)
    outcome = script.install_cupy()
    (cmd,) = calls
    assert cmd[-1] == "cupy-cuda12x==14.2.0" and "--no-index" in cmd
    assert str(tmp_path / ".whl") in cmd
    assert outcome["ok"] is False and "no matching distribution" in str(outcome["error"])


class FakeRuntime:
    """The three runtime calls gpu-check makes, answered as an sm_90 device would."""

    @staticmethod
    def getDeviceProperties(index: int) -> dict[str, object]:  # noqa: N802
        return {"name": b"Fake H200"}

    @staticmethod
    def driverGetVersion() -> int:  # noqa: N802
        return 13000

    @staticmethod
    def runtimeGetVersion() -> int:  # noqa: N802
        return 13000


@needs_gxx
@pytest.mark.parametrize("defects", [(), ("FP8LAB_PLANT_GEMM_REVERSED_K",)])
def test_with_a_device_the_run_is_complete_and_the_device_gemm_is_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defects: tuple[str, ...]
) -> None:
    script = load_script()
    cp = FakeCupy(host_library(defects))
    cp.cuda = types.SimpleNamespace(runtime=FakeRuntime())  # type: ignore[attr-defined]
    cp.__version__ = "fake"  # type: ignore[attr-defined]
    monkeypatch.setattr(script, "probe_cuda", lambda: CudaProbe(None, "", 90, cp))
    monkeypatch.setattr(script, "encode_all_seconds", lambda cp: 0.25)
    small = ((0x43E0_0000 - 4096, 0x43E0_0000 + 4096),)
    monkeypatch.setattr(script, "run_g2", functools.partial(run_g2, patterns=small))
    real_device = script.CudaDevice
    monkeypatch.setattr(script, "CudaDevice", lambda cp: real_device(cp, defects))
    code = script.main([str(tmp_path), "--no-install"])
    record = json.loads((tmp_path / "gpu-check.json").read_text())
    assert record["g2"]["status"] == "PASS" and record["device"]["name"] == "Fake H200"
    kernels = [g["kernel"] for g in record["g3_device"]]
    assert kernels == ["cuda-device/folded", "cuda-device/two_scalar"]
    statuses = {g["status"] for g in record["g3_device"]}
    (run,) = (tmp_path / "results" / "gate_g2").iterdir()
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    if defects:  # a GEMM summed backwards: G3 red, and so is the script's exit status
        assert statuses == {"FAIL"} and code == 1
    else:
        assert statuses == {"PASS"} and code == 0


def test_without_ml_dtypes_it_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    done = run_blocked(tmp_path, "ml_dtypes")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "scripts/gpu-check: needs numpy and ml_dtypes (import of ml_dtypes halted; "
        "None in sys.modules)"
    ]
    assert not (tmp_path / "gpu-check.json").exists()


@pytest.mark.parametrize("flag", ["DIR", "--results"])
def test_a_folder_under_a_regular_file_is_one_line_and_exit_2(flag: str, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    bad = str(tmp_path / "afile" / "sub")
    argv = [bad, "--no-install"] if flag == "DIR" else [str(tmp_path), "--results", bad]
    done = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.strip()
        == f"scripts/gpu-check: {flag} {bad}: {tmp_path / 'afile'} is not a directory"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
