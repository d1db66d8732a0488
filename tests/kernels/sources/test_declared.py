"""A kernel's declaration read from its source text: the two literal forms, and nothing run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fp8lab.kernels.sources.declared import module_file, source_call, source_declaration

SOURCE = """
import os
POLICY = "keep-sign"

def f(x, s):
    return x

def g(x, s):
    return x

def h(x, s):
    return x

class K:
    nan_policy: str = "clamp-pos"
    def quantize(self, x, s):
        return x

class L:
    nan_policy = "all-ones"

class M:
    spec = fp8lab.MatmulSpec("pairwise", epilogue="two_scalar", trees=((1, 2), ()))

class N:
    spec = MatmulSpec(os.environ["X"])

class P:
    spec = Other("pairwise")

f.nan_policy = "canonical"
f.nan_policy = POLICY
g.nan_policy = os.environ["X"]
obj = L()
open("/nonexistent/side-effect", "w")
"""


@pytest.fixture
def kernels(tmp_path: Path) -> list[str]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise SystemExit('a package init must never run')\n")
    (pkg / "mod.py").write_text(SOURCE)
    return [str(tmp_path)]


@pytest.mark.parametrize(
    ("obj", "want"),
    [("f", "keep-sign"), ("g", None), ("h", None), ("K", "clamp-pos"), ("obj", "all-ones")],
)
def test_the_literal_forms_and_nothing_computed(
    kernels: list[str], obj: str, want: str | None
) -> None:
    assert source_declaration(f"pkg.mod:{obj}", "nan_policy", kernels) == want
    assert "pkg" not in sys.modules  # found without importing: the package's init never ran


def test_what_is_not_a_python_source_declares_nothing(kernels: list[str], tmp_path: Path) -> None:
    assert source_declaration("pkg.absent:f", "nan_policy", kernels) is None
    assert source_declaration("pkg.mod", "nan_policy", kernels) is None
    assert source_declaration("pkg.mod:f.g", "nan_policy", kernels) is None
    (tmp_path / "broken.py").write_text("def (:\n")
    assert source_declaration("broken:f", "nan_policy", kernels) is None
    assert module_file("pkg.mod", kernels) == tmp_path / "pkg" / "mod.py"


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        ("M", {"args": ["pairwise"], "epilogue": "two_scalar", "trees": ((1, 2), ())}),
        ("P", None),  # a call of another name states no spec
        ("K", None),  # no spec at all
    ],
)
def test_a_literal_call_is_read_and_another_callee_is_not(
    kernels: list[str], obj: str, want: dict[str, object] | None
) -> None:
    assert source_call(f"pkg.mod:{obj}", "spec", "MatmulSpec", kernels) == want


def test_a_computed_argument_is_refused_not_guessed(kernels: list[str]) -> None:
    with pytest.raises(ValueError, match="not a literal"):
        source_call("pkg.mod:N", "spec", "MatmulSpec", kernels)
