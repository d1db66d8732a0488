from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.cli.main import main

pytestmark = pytest.mark.process


def test_gates_on_builtins_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gates"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 3 and "60522" in out


def test_gates_with_a_user_kernel_and_json(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    assert main(["gates", "--kernel", "fp8lab:quant_static", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert rows[0]["status"] == "PASS" and rows[0]["words"] == 60522
    assert main(["gates", "--kernel", "fp8lab:quant_static", "--json", str(path)]) == 2


def test_gates_exit_1_on_a_defect_and_3_when_only_pending(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["gates", "--kernel", "tests.defects:divide"]) == 1
    assert "s=0.0092/float32 tie" in capsys.readouterr().out
    assert main(["gates", "--gate", "G2", "--kernel", "fp8lab:quant_static"]) == 3
    assert "PENDING" in capsys.readouterr().out


def test_g3_offenders_name_the_output_position(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["gates", "--gate", "G3", "--kernel", "tests.defects:gemm_first_output_doubled"]) == 1
    )
    out = capsys.readouterr().out
    assert "bitwise out[0,0] got" in out and "x=out[" not in out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module:f", "cannot import"),
        ("fp8lab:no_such_func", "no attribute"),
        ("fp8lab:FORMATS", "neither a QuantKernel object nor a function"),
        ("justaname", "MODULE:FUNC"),
    ],
)
def test_bad_kernel_is_a_usage_error(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gates", "--kernel", spec]) == 2
    assert message in capsys.readouterr().err


def test_unknown_gate_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gates", "--gate", "G9"]) == 2
    assert main(["gates", "--gate", ","]) == 2


def test_exhaustive_on_a_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "e.json"
    argv = [
        "exhaustive",
        "fast",
        "ml_dtypes",
        "--format",
        "e4m3fn",
        "--policy",
        "nosat",
        "--start",
        "0xff000000",
        "--workers",
        "1",
        "--quiet",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    record = json.loads(out.read_text())
    assert record["examined"] == 1 << 24 and record["mismatches"] == 0
    assert record["nan_code_mismatches"] > 0
    assert "NaN-code disagreements" in capsys.readouterr().out
    assert main(["exhaustive", "fast", "f32tofp8", "--policy", "nosat"]) == 2
    bad = [
        "exhaustive",
        "tests.defects:one_ulp_off_encoder",
        "scan",
        "--policy",
        "sat",
        "--start",
        "0x3f800000",
        "--stop",
        "0x3f800010",
        "--workers",
        "1",
        "--quiet",
    ]
    assert main(bad) == 1


def test_prove_files_a_quick_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--results", str(tmp_path), "--stop", "0x100000", "--quiet"]) == 3
    out = capsys.readouterr().out
    assert "G2/upstream: PENDING (owed, not run here)" in out
    runs = list((tmp_path / "partial" / "proofs").iterdir())  # --stop: a partial proof
    assert len(runs) == 1 and not (tmp_path / "proofs").exists()
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert manifest["status"] == "partial"
    assert len(list((runs[0] / "exhaustive").glob("*.json"))) == len(manifest["params"]["plan"])


def test_console_script_module_entry() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fp8lab", "gates", "--gate", "G2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3 and "PENDING" in done.stdout


def test_prove_mx_plan_files_its_own_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["prove", "--plan", "mx", "--results", str(tmp_path), "--stop", "0x10000", "--quiet"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "proof fast-vs-scan-e8m0fnu-nosat-canonical: PASS" in out and "gate " not in out
    runs = list((tmp_path / "partial" / "proofs-mx").iterdir())
    assert len(runs) == 1 and not (tmp_path / "partial" / "proofs").exists()
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert len(list((runs[0] / "exhaustive").glob("*.json"))) == len(manifest["params"]["plan"])


def test_prove_failed_line_names_the_failed_runs_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fp8lab.evidence import proofs

    def broken_plan(*_: object, **__: object) -> list[object]:
        raise RuntimeError("planted: a proof worker died")

    monkeypatch.setattr(proofs, "run_plan", broken_plan)
    assert main(["prove", "--results", str(tmp_path), "--stop", "0x100", "--quiet"]) == 1
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("prove: FAILED: planted: a proof worker died (failed/proofs/")
    folder = line.split("(", 1)[1].split(")", 1)[0]
    assert (tmp_path / folder / "manifest.json").is_file()
