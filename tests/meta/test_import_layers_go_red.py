"""The layer and circle checks go red on a planted back import and a planted circle."""

from __future__ import annotations

from pathlib import Path

from tests.refs.test_independence import LAYERS, back_imports, import_circles, import_graph


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "fp8lab"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {(package / rel).parent for rel in files}:
        (folder / "__init__.py").touch()
    return package


def test_a_planted_back_import_goes_red(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "specs/rule.py": "from fp8lab.kernels.port import f\n",  # a spec reaching up
            "kernels/port.py": "from fp8lab.specs.rule import R\n",
        },
    )
    bad = back_imports(import_graph(package), LAYERS)
    assert bad == ["fp8lab.specs.rule -> fp8lab.kernels.port"]


def test_a_module_on_no_floor_goes_red(tmp_path: Path) -> None:
    package = _package(
        tmp_path, {"misc/util.py": "", "cli/main.py": "from fp8lab.misc import util\n"}
    )
    assert back_imports(import_graph(package), LAYERS) == ["fp8lab.cli.main -> fp8lab.misc.util"]


def test_a_planted_circle_goes_red_and_a_layered_package_stays_green(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "bundle/a.py": "from fp8lab.bundle.b import x\n",
            "bundle/b.py": "def f():\n    from fp8lab.bundle.a import y\n",  # a lazy import counts
            "bundle/c.py": "from fp8lab.bundle.a import x\n",
        },
    )
    assert import_circles(import_graph(package)) == [["fp8lab.bundle.a", "fp8lab.bundle.b"]]
    (package / "bundle" / "b.py").write_text("x = 1\n")
    assert import_circles(import_graph(package)) == []
    assert back_imports(import_graph(package), LAYERS) == []
