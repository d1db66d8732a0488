"""Import contracts: references stay independent; the package never imports test tooling."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fp8lab

PACKAGE = Path(fp8lab.__file__).parent
STDLIB = set(sys.stdlib_module_names)
REFERENCE_ALLOWED = {"numpy", "fp8lab.formats", "fp8lab.refs"}
ORACLE_ALLOWED = REFERENCE_ALLOWED | {"ml_dtypes"}
NEVER_IN_PACKAGE = {"pytest", "hypothesis", "papermill", "notebooks", "tests"}
NOTEBOOK_RUNNER = PACKAGE / "evidence" / "notebooks.py"  # the one module allowed papermill


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def allowed(module: str, prefixes: set[str]) -> bool:
    top = module.split(".")[0]
    return top in STDLIB or any(module == p or module.startswith(p + ".") for p in prefixes)


def test_references_import_only_formats_numpy_and_stdlib() -> None:
    checked = 0
    for path in sorted((PACKAGE / "refs").glob("*.py")):
        rules = ORACLE_ALLOWED if path.name == "ml_dtypes_oracle.py" else REFERENCE_ALLOWED
        bad = {m for m in imported_modules(path) if not allowed(m, rules)}
        assert not bad, f"{path.name} imports {bad}"
        checked += 1
    assert checked >= 4


def test_formats_import_nothing_of_fp8lab_but_formats() -> None:
    for path in (PACKAGE / "formats").glob("*.py"):
        rules = {"fp8lab.formats", "ml_dtypes", "numpy"}
        assert all(allowed(m, rules) for m in imported_modules(path)), path.name


def test_package_never_imports_test_or_notebook_tooling() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        tops = {m.split(".")[0] for m in imported_modules(path)}
        if path == NOTEBOOK_RUNNER:
            assert "papermill" in tops
            tops.discard("papermill")
        assert not tops & NEVER_IN_PACKAGE, f"{path} imports {tops & NEVER_IN_PACKAGE}"
