"""Each extra, made absent in this process, leaves its part PENDING or absent with the install line.

A module is made absent by ``sys.modules[name] = None`` (its import fails, its
spec is not found); the CUDA headers and NVRTC, which are files, by taking the
``nvidia`` wheels' folders off ``sys.path``. ``test_every_extra_has_a_check``
makes a new extra come with its absent path here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.cuda.device import probe_cuda
from fp8lab.cuda.nvrtc import NvrtcError, nvrtc_library
from fp8lab.gates.g2 import run_g2
from fp8lab.gates.g2h import run_g2h
from fp8lab.gates.records import GateStatus
from fp8lab.runtime.extras import EXTRAS, install_line
from fp8lab.studies.cuda_host import conversion_facts, g2h_unexpected
from fp8lab.studies.ecosystem import ECOSYSTEM_ROWS, ecosystem_row, summary, unexpected
from fp8lab.studies.ecosystem_onnx import onnx_cast_rows, onnx_dynamic_rows, onnx_static_rows
from fp8lab.studies.order_torch import NO_TORCH, torch_order_rows
from fp8lab.studies.triton_interp import interpreter_run
from fp8lab.sweeps.range_run import RangeRun

Capture = pytest.CaptureFixture[str]


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def check_torch(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    hide(monkeypatch, "torch")
    rows, records = torch_order_rows([16], [32], [(16, 16)], seed=0)
    assert records == [] and [r.note for r in rows] == [NO_TORCH]
    assert NO_TORCH.endswith(install_line("torch"))


def check_triton(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    hide(monkeypatch, "torch", "triton")  # both, so the line is the same with torch or without
    proofs = interpreter_run(RangeRun(start=0x3F800000, stop=0x3F800010, workers=1))
    assert proofs.records == () and proofs.version == "absent"
    assert proofs.absent == f"torch, triton are absent: {install_line('triton')}"
    assert proofs.unexpected() == [] and proofs.stock_by_class() == proofs.stock_examples() == []
    assert set(proofs.verdicts().values()) == {f"PENDING ({proofs.absent})"}
    assert set(proofs.numbers().values()) == {0}


def check_ecosystem(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    hide(monkeypatch, "torchao", "compressed_tensors")

    def never(*_: Any) -> list[Any]:
        raise AssertionError("an absent library's kernel was run")

    for entry in ECOSYSTEM_ROWS:
        row = ecosystem_row(entry, RangeRun(start=0, stop=16), runner=never)
        assert row["status"] == "absent" and not unexpected(row)
        assert row["reason"].endswith(install_line("ecosystem")), row["reason"]
        (verdict,) = summary([row])[0].values()
        assert verdict == f"PENDING (absent: {row['reason']})"


def check_onnx(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    hide(monkeypatch, "onnx", "onnxruntime")
    rows = onnx_static_rows() + onnx_dynamic_rows() + onnx_cast_rows(RangeRun(start=0, stop=16))
    assert rows and all(r["status"] == "absent" for r in rows)
    assert all(r["reason"].endswith(install_line("onnx")) for r in rows), rows[0]["reason"]


def check_dask(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, out: Capture) -> None:
    hide(monkeypatch, "distributed")
    argv = ["evidence", "tie_sweep", "--dask-local", "1", "--results", str(tmp_path)]
    assert main(argv) == 2 and not (tmp_path / "tie_sweep").exists()
    assert out.readouterr().err.strip().endswith(install_line("dask"))


def check_cuda_host(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    monkeypatch.delenv("FP8LAB_CUDA_INCLUDE", raising=False)
    monkeypatch.delenv("FP8LAB_NVRTC", raising=False)
    kept = [p for p in sys.path if not (Path(p or ".") / "nvidia").is_dir()]
    monkeypatch.setattr(sys, "path", kept)
    g2h = run_g2h(scales=(1.0,), input_dtypes=("float32",), patterns=((0, 16),))
    assert g2h.status is GateStatus.PENDING and g2h.words == 0 and not g2h_unexpected(g2h)
    assert install_line("cuda-host") in g2h.reason
    facts, why = conversion_facts()
    assert facts == [] and install_line("cuda-host") in why
    with pytest.raises(NvrtcError, match=r"fp8lab\[cuda-host\]"):
        nvrtc_library()


def check_cuda(monkeypatch: pytest.MonkeyPatch, _: Path, __: Capture) -> None:
    hide(monkeypatch, "cupy")
    found = probe_cuda()
    assert found.missing == "cupy" and found.reason.endswith(install_line("cuda"))
    g2 = run_g2(scales=(1.0,), input_dtypes=("float32",), patterns=((0, 16),))
    assert g2.status is GateStatus.PENDING and g2.words == 0 and "missing cupy" in g2.reason


CHECKS: dict[str, Callable[[pytest.MonkeyPatch, Path, Capture], None]] = {
    "torch": check_torch,
    "triton": check_triton,
    "ecosystem": check_ecosystem,
    "onnx": check_onnx,
    "dask": check_dask,
    "cuda-host": check_cuda_host,
    "cuda": check_cuda,
}


def test_every_extra_has_a_check() -> None:
    assert set(CHECKS) == set(EXTRAS)


@pytest.mark.parametrize("extra", sorted(CHECKS))
def test_an_absent_extra_leaves_its_part_pending_with_the_install_line(
    extra: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Capture
) -> None:
    CHECKS[extra](monkeypatch, tmp_path, capsys)
