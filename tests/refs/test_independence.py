"""Import contracts: references stay independent; the package never imports test tooling."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fp8lab

PACKAGE = Path(fp8lab.__file__).parent
STDLIB = set(sys.stdlib_module_names)
# fp8lab.chains.recipe is declaration only (standard library), read by refs and ports alike;
# so are the scale rules (fp8lab.schemes.rules, nvfp4_rules).
RULE_DATA = {"fp8lab.schemes.rules", "fp8lab.schemes.nvfp4_rules"}
REFERENCE_ALLOWED = {"numpy", "fp8lab.formats", "fp8lab.refs", "fp8lab.chains.recipe", *RULE_DATA}
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


# References outside refs/: the exact GEMM product and the seed's tolerance.
OTHER_REFERENCES = [PACKAGE / "gemm" / "reference.py"]
# Kernel-side GEMM code: G3's verdict must reach none of it.
GEMM_KERNEL_SIDE = {
    "fp8lab.codecs",
    "fp8lab.gemm.epilogue",
    "fp8lab.gemm.epilogue_exact",
    "fp8lab.gemm.kernels",
    "fp8lab.gemm.matmul_model",
    "fp8lab.gemm.models",
    "fp8lab.mutants",
}


def test_references_import_only_formats_numpy_and_stdlib() -> None:
    checked = set()
    for path in sorted((PACKAGE / "refs").rglob("*.py")) + OTHER_REFERENCES:
        rules = ORACLE_ALLOWED if path.name == "ml_dtypes_oracle.py" else REFERENCE_ALLOWED
        bad = {m for m in imported_modules(path) if not allowed(m, rules)}
        assert not bad, f"{path.name} imports {bad}"
        checked.add(path.name)
    # G3's order-faithful models (accumulators, decode and epilogue) are among them.
    assert {"gemm_accumulators.py", "gemm_model.py", "reference.py"} <= checked
    assert {"chain_ref.py", "exact_float.py", "schemes.py", "float32_exact.py"} <= checked
    assert len(checked) >= 9


def test_chain_declarations_import_only_the_standard_library() -> None:
    path = PACKAGE / "chains" / "recipe.py"
    bad = {m for m in imported_modules(path) if m.split(".")[0] not in STDLIB}
    assert not bad, bad


def test_gf_reaches_no_port_or_kernel_code() -> None:
    found = imported_modules(PACKAGE / "gates" / "gf.py")
    kernel_side = {"fp8lab.chains.ports", "fp8lab.kernels", "fp8lab.codecs", "fp8lab.mutants"}
    bad = {m for m in found if any(m == k or m.startswith(k + ".") for k in kernel_side)}
    assert not bad, bad


def test_scale_rules_are_data_and_the_schemes_package_loads_no_port() -> None:
    for module in RULE_DATA:
        path = PACKAGE / "schemes" / f"{module.rsplit('.', 1)[1]}.py"
        found = imported_modules(path)
        assert all(m.split(".")[0] in STDLIB for m in found), f"{path.name} imports {found}"
    init = imported_modules(PACKAGE / "schemes" / "__init__.py")
    assert init <= RULE_DATA, f"fp8lab/schemes/__init__.py imports {init - RULE_DATA}"


def test_g3_reaches_no_kernel_side_gemm_code() -> None:
    for name in ("g3.py", "g3_nan.py", "g3_spec.py"):
        found = imported_modules(PACKAGE / "gates" / name)
        bad = {m for m in found if any(m == k or m.startswith(k + ".") for k in GEMM_KERNEL_SIDE)}
        assert not bad, f"{name} imports kernel-side {bad}"
    import fp8lab.gates.g3 as g3

    assert g3.model_output_bits.__module__ == "fp8lab.refs.gemm_model"


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
