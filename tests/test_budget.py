"""tests/budget.toml names real tests and real folders, each slow entry with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

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
