"""--json and --junit-xml are reserved before the run: a file planted there is replaced and said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import fp8lab.cli.gates_cmd as gates_cmd
from fp8lab.cli.main import main
from fp8lab.gates import GateResult, GateStatus

FORGED = '{"results": [{"status": "PASS"}]}'


@pytest.fixture
def targets(tmp_path: Path) -> dict[str, Path]:
    return {"--json": tmp_path / "out.json", "--junit-xml": tmp_path / "junit.xml"}


def _argv(targets: dict[str, Path]) -> list[str]:
    return ["gates", "--gate", "G1", *(x for f, p in targets.items() for x in (f, str(p)))]


def _planting(targets: dict[str, Path], how: str) -> Any:
    """A G1 run that, midway, plants a forged PASS at both targets; then it FAILs."""

    def run_gate(gate: Any, args: Any, options: Any) -> list[GateResult]:
        for path in targets.values():
            assert path.exists() and path.stat().st_size == 0  # reserved before the gate ran
            if how == "swap":
                path.unlink()
            path.write_text(FORGED)
        return [GateResult("G1", "k", GateStatus.FAIL, "planted", 1, 1, 1, 1, 1, 0)]

    return run_gate


@pytest.mark.parametrize("how", ["write", "swap"])
def test_a_record_planted_during_the_run_is_replaced_and_said(
    targets: dict[str, Path],
    how: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(gates_cmd, "_run_gate", _planting(targets, how))
    assert main(_argv(targets)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("replaced by this run's record" in line for line in err)
    assert json.loads(targets["--json"].read_text())[0]["status"] == "FAIL"
    assert "<failure" in targets["--junit-xml"].read_text()


def test_an_existing_junit_target_is_refused_before_any_work(
    targets: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    targets["--junit-xml"].write_text("keep")
    monkeypatch.setattr(gates_cmd, "_run_gate", lambda *a: pytest.fail("the gate ran"))
    assert main(_argv(targets)) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--junit-xml" in line and "exists" in line
    assert targets["--junit-xml"].read_text() == "keep" and not targets["--json"].exists()


def test_a_run_that_writes_no_record_leaves_no_file(
    targets: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(targets)
    argv[2] = "NO-SUCH-GATE"
    assert main(argv) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not any(p.exists() for p in targets.values())
