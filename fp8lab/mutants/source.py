"""Source-level mutation of the built-in kernel modules through the AST.

Each operator visits the parsed module and yields one mutation per site; a
mutant is the module re-parsed, with one site changed, compiled and executed
into a fresh module object. The working tree is never edited.
Operators: ``*``/``/`` swapped, ``<``/``<=`` and ``>``/``>=`` swapped, an
integer constant +1 or -1, a call statement dropped (a clamp or a branch's
effect), ``np.clip(x, lo, hi)`` replaced by ``x``, min/max swapped.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OPERATORS",
    "SourceMutation",
    "compile_module",
    "load_mutant",
    "mutant_tree",
    "parse_module",
    "source_mutations",
]

_SWAP_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}
_SWAP_NAMES = {
    "minimum": "maximum",
    "maximum": "minimum",
    "min": "max",
    "max": "min",
    "fmin": "fmax",
    "fmax": "fmin",
}


@dataclass(frozen=True)
class SourceMutation:
    """One change at one site of one module."""

    module: str
    operator: str
    index: int  # the site's rank among this operator's sites in the module
    line: int
    original: str
    replacement: str

    @property
    def key(self) -> str:
        """A stable id: module, operator and site rank."""
        return f"{self.module}:{self.operator}:{self.index}"


def _binop_sites(tree: ast.AST) -> Iterator[ast.BinOp]:
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
            yield node


def _cmp_sites(tree: ast.AST) -> Iterator[ast.Compare]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAP_CMP:
            yield node


def _int_sites(tree: ast.AST) -> Iterator[ast.Constant]:
    for node in ast.walk(tree):
        is_int = isinstance(node, ast.Constant) and type(node.value) is int
        if is_int:
            yield node  # type: ignore[misc]


def _call_statement_sites(tree: ast.AST) -> Iterator[ast.Expr]:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and not isinstance(node, ast.Module | ast.ClassDef):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    yield stmt


def _clip_sites(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "clip":
            yield node


def _minmax_sites(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        name = getattr(node, "attr", None) or getattr(node, "id", None)
        if isinstance(node, ast.Attribute | ast.Name) and name in _SWAP_NAMES:
            yield node


def _swap_binop(node: ast.BinOp) -> str:
    node.op = ast.Div() if isinstance(node.op, ast.Mult) else ast.Mult()
    return "/" if isinstance(node.op, ast.Div) else "*"


def _swap_cmp(node: ast.Compare) -> str:
    node.ops[0] = _SWAP_CMP[type(node.ops[0])]()
    return type(node.ops[0]).__name__


def _plus_one(node: ast.Constant) -> str:
    assert isinstance(node.value, int)
    node.value = node.value + 1
    return str(node.value)


def _minus_one(node: ast.Constant) -> str:
    assert isinstance(node.value, int)
    node.value = node.value - 1
    return str(node.value)


def _drop_statement(node: ast.Expr) -> str:
    node.value = ast.Constant(value=None)
    return "None"


def _clip_identity(node: ast.Call) -> str:
    node.func = ast.Name(id="_fp8lab_identity", ctx=ast.Load())
    node.args, node.keywords = node.args[:1], []
    return "identity"


def _swap_minmax(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        node.attr = _SWAP_NAMES[node.attr]
        return node.attr
    assert isinstance(node, ast.Name)
    node.id = _SWAP_NAMES[node.id]
    return node.id


Operator = tuple[Callable[[ast.AST], Iterator[ast.AST]], Callable[[ast.AST], str]]
OPERATORS: dict[str, Operator] = {
    "swap_mul_div": (_binop_sites, _swap_binop),  # type: ignore[dict-item]
    "swap_strict_compare": (_cmp_sites, _swap_cmp),  # type: ignore[dict-item]
    "int_plus_one": (_int_sites, _plus_one),  # type: ignore[dict-item]
    "int_minus_one": (_int_sites, _minus_one),  # type: ignore[dict-item]
    "drop_call_statement": (_call_statement_sites, _drop_statement),  # type: ignore[dict-item]
    "clip_to_identity": (_clip_sites, _clip_identity),  # type: ignore[dict-item]
    "swap_min_max": (_minmax_sites, _swap_minmax),
}


def parse_module(module: str) -> tuple[ast.Module, str]:
    """The AST and text of an importable module's source file."""
    return _parse(module)


def _source(module: str) -> tuple[str, str]:
    """The path of ``module``'s file and its text."""
    path = Path(importlib.import_module(module).__file__ or "")
    return str(path), path.read_text()


def _parse(module: str) -> tuple[ast.Module, str]:
    path, text = _source(module)
    return ast.parse(text, filename=path), text


def source_mutations(module: str) -> list[SourceMutation]:
    """Every mutation of every operator at every site of ``module``, in a stable order."""
    return list(_mutations_of(module, *_source(module)))


@functools.lru_cache(maxsize=32)
def _mutations_of(module: str, path: str, text: str) -> tuple[SourceMutation, ...]:
    """:func:`source_mutations` of one text of ``module``'s file (the same text, the same list)."""
    tree = ast.parse(text, filename=path)
    lines = text.splitlines(keepends=True)
    found = []
    for name, (sites, apply) in OPERATORS.items():
        for index, node in enumerate(sites(tree)):
            original = _first_line(lines, node) or ast.unparse(node).splitlines()[0]
            mutated = copy.deepcopy(node)
            apply(mutated)
            replacement = ast.unparse(mutated).replace("_fp8lab_identity", "")
            line = getattr(node, "lineno", 0)
            found.append(SourceMutation(module, name, index, line, original, replacement))
    return tuple(found)


def _first_line(lines: list[str], node: ast.AST) -> str:
    """The first line of ``node``'s source segment (``ast.get_source_segment``'s, split once).

    Empty where the node carries no position.
    """
    try:
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    except AttributeError:
        return ""
    line = lines[first].encode()  # the offsets count UTF-8 bytes
    segment = line[start:end] if first == last else line[start:]
    return segment.decode().splitlines()[0] if segment.strip() else ""


def load_mutant(mutation: SourceMutation) -> types.ModuleType:
    """Compile ``module`` with the one change and execute it as a fresh module.

    Raises:
        Exception: whatever compiling or executing the mutant raises (it is
            then INCOMPETENT).
    """
    tree = mutant_tree(mutation)
    return compile_module(tree, f"{mutation.module}__mutant_{mutation.operator}_{mutation.index}")


def mutant_tree(mutation: SourceMutation) -> ast.Module:
    """The parsed module with the one change made (what :func:`load_mutant` executes)."""
    tree, _ = _parse(mutation.module)
    sites, apply = OPERATORS[mutation.operator]
    apply(list(sites(tree))[mutation.index])
    return tree


def compile_module(tree: ast.Module, name: str) -> types.ModuleType:
    """Execute ``tree`` as a new module called ``name``, outside the package.

    Raises:
        Exception: whatever compiling or executing it raises.
    """
    ast.fix_missing_locations(tree)
    module = types.ModuleType(name)
    module.__dict__["_fp8lab_identity"] = lambda x: x
    sys.modules[name] = module  # dataclasses look their module up while being built
    try:
        exec(compile(tree, f"<{name}>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module
