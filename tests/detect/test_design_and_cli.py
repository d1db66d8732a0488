from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.detect import check_golden, design_detector, load_golden, write_golden
from fp8lab.detect.pair import resolve_kernel
from fp8lab.gates.compare import compare_codes
from fp8lab.kernels import quant_static
from fp8lab.specs.formats import FORMATS
from tests.defects import divide


def test_golden_vectors_kill_divide_and_pass_quant_static(tmp_path: Path) -> None:
    det = design_detector([0.0092, 0.13, 0.77, 1.0, 3.0], margin=4, budget=3)
    assert det.inputs.size == det.lower_bound == 12 and (det.failing >= 4).all()
    json_path, npz_path = write_golden(det, tmp_path / "divide")
    golden = load_golden(npz_path)
    spec = FORMATS["e4m3fn"]
    for s, want in zip(golden.scales, golden.expected, strict=True):
        assert compare_codes(quant_static(golden.inputs, s), want, spec).mismatches == 0
        assert compare_codes(divide(golden.inputs, s), want, spec).mismatches >= 4
    assert check_golden(resolve_kernel("divide"), golden) == det.failing.tolist()
    doc = json.loads(json_path.read_text())
    assert doc["schema"] == "fp8lab.golden/1"
    entry = doc["entries"][0]
    words = np.array([float.fromhex(h) for h in entry["inputs_hex"]], np.float32)
    assert np.array_equal(words, golden.inputs) and entry["expected"] == golden.expected[0].tolist()
    with pytest.raises(FileExistsError):
        write_golden(det, tmp_path / "divide")


def test_design_refuses_an_unmeetable_budget() -> None:
    with pytest.raises(ValueError, match="budget 2 cannot be met"):
        design_detector([1.0, 0.5, 0.13], margin=1, budget=2)
    with pytest.raises(ValueError, match=">= 1"):
        design_detector([0.13], margin=0, budget=1)


def test_cli_detect_json(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    assert main(["detect", "--scales", "0.0092,0.13,0.77,1.0,3.0", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert [e["count"] for e in doc["entries"]] == [60, 118, 128, 0, 30]
    assert doc["entries"][1]["scale"] == float(np.float32(0.13))
    assert len(doc["entries"][0]["inputs"]) == 60


def test_cli_detect_check_on_a_range(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["detect", "--scales", "0.0092", "--method", "check", "--quiet"]
    assert main([*argv, "--start", "0x3b000000", "--stop", "0x3b800000", "--workers", "1"]) == 0
    assert "equal=True" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scales", "0"], "not positive"),
        (["--scales", "1,-2"], "not positive"),
        (["--scales", "nan"], "not finite"),
        (["--scales", "inf"], "not finite"),
        (["--scales", "1e-40"], "smallest normal"),
        (["--scales", "1e39"], "2**126"),
        (["--scales", "2e38"], "2**126"),
        (["--scales", ","], "no scales"),
        (["--scales", "abc"], "not a number"),
        (["--scales", "1", "--kernels", "nope,divide"], "unknown kernel"),
        (["--scales", "1", "--kernels", "divide"], "two kernels"),
    ],
)
def test_cli_detect_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["detect", *argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_sweep_and_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    assert main(["sweep", "--scales", "0.13,1.0,3.0", "--workers", "1", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert doc["record"]["count"] == [118, 0, 30]
    assert doc["seed_scores"][0]["seed_found"] == 78
    assert main(["sweep", "--scales", ""]) == 2
    assert main(["sweep", "-n", "0"]) == 2
    stem = tmp_path / "g"
    assert main(["design", "--scales", "0.13,0.77,3.0", "--out", str(stem)]) == 0
    assert stem.with_suffix(".npz").exists() and "mutant divide" in capsys.readouterr().out
    assert main(["design", "--scales", "1.0", "--out", str(tmp_path / "h")]) == 2
