"""tests/budget.toml names real tests and real folders, each slow entry with its reason; the
ledger script reads the ledger."""

from __future__ import annotations

import ast
import json
import runpy
from pathlib import Path

import pytest

from tests.budget import load_budget

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_entry_names_a_test_function_and_says_why() -> None:
    for key, reason in load_budget()["slow"].items():
        path, _, function = key.partition("::")
        tree = ast.parse((ROOT / path).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function.startswith("test_") and function in names, key
        assert isinstance(reason, str) and len(reason) > 10, key


def test_every_budget_is_a_folder_of_tests_and_a_number_of_seconds() -> None:
    for folder, seconds in load_budget()["budget"].items():
        assert (ROOT / folder).is_dir() and folder.startswith("tests"), folder
        assert isinstance(seconds, int | float) and seconds > 0, folder


def test_the_ledger_script_prints_folders_bands_and_the_slowest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = runpy.run_path(str(Path(__file__).resolve().parent.parent / "scripts" / "test-ledger"))
    tests = {
        "tests/a/test_x.py::test_quick": {"seconds": 0.0, "cpu_seconds": 0.0, "slow": None},
        "tests/a/test_x.py::test_process": {"seconds": 3.0, "cpu_seconds": 2.5, "slow": None},
        "tests/b/test_y.py::test_long": {"seconds": 12.0, "cpu_seconds": 1.0, "slow": "why"},
    }
    ledger = tmp_path / "ledger.json"
    host = {"cpus": 2, "load": [1.0, 1.0, 1.0]}
    record = {"wall_seconds": 9.0, "exit_status": 0, "args": ["-n", "2"], "host": host}
    ledger.write_text(json.dumps({**record, "tests": tests}))
    assert script["main"]([str(ledger), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "3 tests, 15.0 s of test time, 3.5 s of CPU, 9.0 s wall" in out
    assert "| tests/a | 2 | 3.0 | 20.0% | 2.5 |" in out
    assert "| tests/b | 1 | 12.0 | 80.0% | 1.0 |" in out
    assert "| 0-0.05 | 1 | 0.0 | 0.0% |" in out and "| 2-5 | 1 | 3.0 | 20.0% |" in out
    assert "| 10 or more | 1 | 12.0 | 80.0% |" in out
    assert "| `tests/b/test_y.py::test_long` | 12.0 | why |" in out
    waits = out.split("| waits most |")[1]  # the waiter first: 11 s of its 12 s not on a CPU
    assert waits.index("test_long` | 12.0 | 1.0 |") < waits.index("test_process` | 3.0 | 2.5 |")
