"""Each committed notebook ends with its report-summary cell, filled from its records.

The report renderer moves that cell to the top. Its verdicts and key numbers
must be computed, never typed: no value of ``verdicts=`` or ``numbers=`` is a
literal.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from fp8lab.evidence.execute import NOTEBOOKS_DIR
from fp8lab.evidence.shown import SUMMARY_TAG

# Notebooks that do not have the cell yet, each with the reason.
WITHOUT_SUMMARY: dict[str, str] = {}
NOTEBOOKS = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def literal_values(source: str) -> list[str]:
    """The keyword arguments ``verdicts``/``numbers`` of ``out.summary`` whose values are typed."""
    typed = []
    calls = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "summary"
    ]
    assert len(calls) == 1, "one out.summary(...) call"
    for keyword in calls[0].keywords:
        if keyword.arg in ("verdicts", "numbers") and isinstance(keyword.value, ast.Dict):
            for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                if isinstance(value, ast.Constant):
                    typed.append(f"{keyword.arg}: {ast.unparse(key) if key else '**'}")
    return typed


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_ends_with_a_computed_summary(name: str) -> None:
    if name in WITHOUT_SUMMARY:
        pytest.skip(f"{name}: no report-summary cell yet ({WITHOUT_SUMMARY[name]})")
    cells = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4).cells
    tagged = [i for i, c in enumerate(cells) if SUMMARY_TAG in c.metadata.get("tags", [])]
    assert tagged == [len(cells) - 1], f"{name}: the last cell, and only it, is tagged"
    assert literal_values(cells[-1].source) == []


def test_a_typed_number_or_verdict_is_found() -> None:
    source = "out.summary(verdicts={'a': 'PASS'}, numbers={'n': 1024, 'm': len(x)}, parameters={})"
    assert literal_values(source) == ["verdicts: 'a'", "numbers: 'n'"]
