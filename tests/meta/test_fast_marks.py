"""``make test-fast`` chooses tests by their marks alone, and no test that starts processes
or runs a notebook can join it unmarked.

A module whose source starts processes (subprocess, papermill, worker pools, clusters,
compilers, Chromium, the CLI's gate children) must carry ``process`` or ``notebook`` in its
``pytestmark``; the check is read from the source, so a new unmarked module goes red here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTS_PROCESSES = re.compile(
    r"^\s*(import|from) (subprocess|papermill|multiprocessing)\b|"
    r"\b(subprocess\.\w+|Popen|run_notebook|ProcessPoolExecutor|worker_pool|LocalCluster|"
    r"open_cluster|build_shared\w*|gates_subprocess|chromium_probe)\(",
    re.M,
)
PROCESS_MARKS = ("process", "notebook")


def module_marks(source: str) -> set[str]:
    """The names of the marks in a module's ``pytestmark`` (``pytest.mark.NAME``)."""
    marks: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            for sub in ast.walk(node.value):
                parent = getattr(sub, "value", None)
                if isinstance(sub, ast.Attribute) and isinstance(parent, ast.Attribute):
                    marks |= {sub.attr} if parent.attr == "mark" else set()
    return marks


def unmarked(sources: dict[str, str]) -> list[str]:
    """Modules whose source starts processes but whose marks say neither process nor notebook."""
    return sorted(
        name
        for name, text in sources.items()
        if STARTS_PROCESSES.search(text) and not module_marks(text) & set(PROCESS_MARKS)
    )


def test_test_fast_selects_by_marks_alone() -> None:
    makefile = (REPO / "Makefile").read_text()
    fast = re.search(r"^FAST_ARGS :=(.*)$", makefile, re.M)
    assert fast and "--ignore" not in makefile and "--deselect" not in makefile
    assert all(f"not {m}" in fast.group(1) for m in ("slow", *PROCESS_MARKS))
    declared = (REPO / "pyproject.toml").read_text()
    assert all(f'"{m}: ' in declared for m in ("slow", *PROCESS_MARKS))


def test_every_module_that_starts_processes_is_marked() -> None:
    sources = {
        p.relative_to(REPO).as_posix(): p.read_text()
        for p in sorted((REPO / "tests").rglob("test_*.py"))
    }
    assert len(sources) > 100
    assert unmarked(sources) == []


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("import os\ndef test_x(): " + "subprocess" + ".run([])\n", True),
        ("import pytest\npytestmark = pytest.mark.slow\nrun_notebook(nb, out)\n", True),
        ("import pytest\npytestmark = pytest.mark.process\nimport subprocess\n", False),
        ("import pytest\npytestmark = [pytest.mark.notebook]\nimport papermill\n", False),
        ("FORBIDDEN = ['papermill', 'subprocess']\n", False),
        ("def test_x():\n    assert 1 + 1 == 2\n", False),
    ],
)
def test_the_guard_goes_red_on_an_unmarked_process_test(source: str, flagged: bool) -> None:
    assert (unmarked({"test_planted.py": source}) == ["test_planted.py"]) is flagged
