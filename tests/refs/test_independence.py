"""Import contracts: references stay independent; the package never imports test tooling."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fp8lab

PACKAGE = Path(fp8lab.__file__).parent
STDLIB = set(sys.stdlib_module_names)
# fp8lab.specs holds declarations only (standard library), read by refs and ports alike.
REFERENCE_ALLOWED = {"numpy", "fp8lab.specs", "fp8lab.refs"}
ORACLE_ALLOWED = REFERENCE_ALLOWED | {"ml_dtypes"}
NEVER_IN_PACKAGE = {"pytest", "hypothesis", "papermill", "notebooks", "tests"}
NOTEBOOK_RUNNER = PACKAGE / "evidence" / "execute.py"  # the one module allowed papermill


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


# Kernel-side GEMM code: G3's verdict must reach none of it.
GEMM_KERNEL_SIDE = {
    "fp8lab.codecs",
    "fp8lab.kernels.matmul_epilogue",
    "fp8lab.refs.gemm_epilogue",
    "fp8lab.kernels.matmul",
    "fp8lab.kernels.matmul_model",
    "fp8lab.kernels.matmul_models",
    "fp8lab.mutants",
}


def test_references_import_only_formats_numpy_and_stdlib() -> None:
    checked = set()
    for path in sorted((PACKAGE / "refs").rglob("*.py")):
        rules = ORACLE_ALLOWED if path.name == "ml_dtypes_oracle.py" else REFERENCE_ALLOWED
        bad = {m for m in imported_modules(path) if not allowed(m, rules)}
        assert not bad, f"{path.name} imports {bad}"
        checked.add(path.name)
    # G3's order-faithful models (accumulators, decode and epilogue) are among them.
    assert {"gemm_accumulators.py", "gemm_model.py", "gemm_exact.py"} <= checked
    assert {"chain_ref.py", "exact_float.py", "schemes.py", "float32_exact.py"} <= checked
    assert len(checked) >= 9


def test_specs_load_with_the_standard_library_alone() -> None:
    """Specs import the standard library and specs; numpy only inside a function that needs it."""
    files = sorted((PACKAGE / "specs").glob("*.py"))
    assert len(files) >= 8
    for path in files:
        tree = ast.parse(path.read_text())
        in_calls = {
            n
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef)
            or (isinstance(f, ast.If) and ast.unparse(f.test) == "TYPE_CHECKING")
            for n in ast.walk(f)
            if isinstance(n, ast.Import | ast.ImportFrom)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or node in in_calls:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            bad = {m for m in names if m and not allowed(m, {"fp8lab.specs"})}
            assert not bad, f"{path.name} imports {bad} when it loads"
        late = {a.name for n in in_calls if isinstance(n, ast.Import) for a in n.names}
        assert late <= {"numpy", "ml_dtypes"}, f"{path.name} imports {late} in a call or a type"


def test_gf_reaches_no_port_or_kernel_code() -> None:
    found = imported_modules(PACKAGE / "gates" / "gf.py")
    kernel_side = {"fp8lab.kernels.chain", "fp8lab.kernels", "fp8lab.codecs", "fp8lab.mutants"}
    # the isolated kernel's wire format (arrays and type names across the pipe), not kernel code
    transport = {"fp8lab.kernels.sources.wire"}
    bad = {
        m
        for m in found
        if m not in transport and any(m == k or m.startswith(k + ".") for k in kernel_side)
    }
    assert not bad, bad


def test_g3_reaches_no_kernel_side_gemm_code() -> None:
    for name in ("g3.py", "g3_nan.py", "g3_spec.py", "g3_run.py"):
        found = imported_modules(PACKAGE / "gates" / name)
        bad = {m for m in found if any(m == k or m.startswith(k + ".") for k in GEMM_KERNEL_SIDE)}
        assert not bad, f"{name} imports kernel-side {bad}"
    import fp8lab.gates.g3 as g3

    assert g3.declared_output_bits.__module__ == "fp8lab.refs.gemm_declared"


def test_package_never_imports_test_or_notebook_tooling() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        tops = {m.split(".")[0] for m in imported_modules(path)}
        if path == NOTEBOOK_RUNNER:
            assert "papermill" in tops
            tops.discard("papermill")
        assert not tops & NEVER_IN_PACKAGE, f"{path} imports {tops & NEVER_IN_PACKAGE}"


# The floors of the package, bottom first: a module imports only its own floor and below.
LAYERS = (
    "specs",
    "runtime",
    "codecs",
    "refs",
    "kernels",
    "cuda",
    "populations",
    "gates",
    "sweeps",
    "detect",
    "order",
    "mutants",
    "bundle",
    "studies",
    "plots",
    "evidence",
    "bench",
    "testing",
    "cli",
)
TOP_LEVEL = {"fp8lab", "fp8lab.__main__"}  # the public names and ``python -m fp8lab``


def module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Every module of ``package`` -> the modules of it that it imports (at any depth)."""
    modules = {module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in modules:
                for alias in node.names:  # ``from pkg import module`` names the module
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
        graph[name] = found - {name}
    return graph


def back_imports(graph: dict[str, set[str]], layers: tuple[str, ...]) -> list[str]:
    """``A -> B`` for every import of a higher floor, or of a module on no floor."""

    def floor(module: str) -> int | None:
        parts = module.split(".")
        if module in TOP_LEVEL:
            return len(layers)
        return layers.index(parts[1]) if len(parts) > 1 and parts[1] in layers else None

    bad = []
    for module, targets in sorted(graph.items()):
        here = floor(module)
        for target in sorted(targets):
            there = floor(target)
            if here is None or there is None or there > here:
                bad.append(f"{module} -> {target}")
    return bad


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_every_folder_of_the_package_is_a_floor() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(LAYERS), folders ^ set(LAYERS)
    loose = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert not loose, f"modules on no floor: {sorted(loose)}"


def test_no_import_runs_back_up_a_floor() -> None:
    graph = import_graph(PACKAGE)
    assert sum(len(t) for t in graph.values()) > 300  # the graph was read
    assert back_imports(graph, LAYERS) == []


def test_the_import_graph_has_no_circle() -> None:
    assert import_circles(import_graph(PACKAGE)) == []
