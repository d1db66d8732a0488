"""What a ``MODULE:OBJ`` kernel declares, read from its source text before any of it runs.

The parent never imports a ``--kernel``'s module, and it never believes what
the kernel's own process reports (a kernel can rewrite that). What the user
wrote in the module's source is another matter: the parent reads the file as
text and takes a declaration only in one of two literal forms,

- ``OBJ.ATTRIBUTE = "value"`` at module level (or ``= NAME`` where ``NAME =
  "value"`` is a module-level assignment), for a function;
- ``ATTRIBUTE = "value"`` in the body of ``class OBJ`` or of the class whose
  instance ``OBJ = ClassName(...)`` is,

and nothing computed. A GEMM kernel's model is read the same way from
``spec = MatmulSpec(...)`` with literal arguments (:func:`source_call`).
The module's file is found the way the import system would find it
(:class:`importlib.machinery.PathFinder`), without executing any package's
``__init__``.
"""

from __future__ import annotations

import ast
import os
import stat
from importlib.machinery import PathFinder, SourceFileLoader
from pathlib import Path
from typing import Any

__all__ = ["MAX_SOURCE_BYTES", "module_file", "source_call", "source_declaration"]

MAX_SOURCE_BYTES = 1 << 22  # a kernel module larger than this declares nothing here


def module_file(module: str, search: list[str]) -> Path | None:
    """The ``.py`` file of ``module`` on ``search`` (sys.path-like), found without importing."""
    parts = module.split(".")
    where: list[str] | None = [os.getcwd() if p == "" else p for p in search]
    spec = None
    for i in range(len(parts)):
        spec = PathFinder.find_spec(".".join(parts[: i + 1]), where)
        if spec is None:
            return None
        where = list(spec.submodule_search_locations or [])
    if spec is None or not isinstance(spec.loader, SourceFileLoader) or not spec.origin:
        return None
    return Path(spec.origin)


def _literals(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    found[target.id] = node.value.value
    return found


def _text(value: ast.expr, literals: dict[str, str]) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Name):
        return literals.get(value.id)
    return None


def _class_attribute(tree: ast.Module, cls: str, attribute: str) -> ast.expr | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else []
                if isinstance(item, ast.AnnAssign):
                    targets = [item.target]
                named = any(isinstance(t, ast.Name) and t.id == attribute for t in targets)
                value = getattr(item, "value", None) if named else None
                if isinstance(value, ast.expr):
                    return value
    return None


def _declared_node(tree: ast.Module, obj: str, attribute: str) -> ast.expr | None:
    """The expression ``obj``'s ``attribute`` is assigned in the module's text, if any."""
    said: ast.expr | None = None
    for node in tree.body:  # the last module-level statement wins, as it would at import
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == attribute
                and isinstance(target.value, ast.Name)
                and target.value.id == obj
            ):
                said = node.value
            elif (
                isinstance(target, ast.Name)
                and target.id == obj
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
            ):
                said = _class_attribute(tree, node.value.func.id, attribute) or said
    return said if said is not None else _class_attribute(tree, obj, attribute)


def _parsed(source: str, search: list[str]) -> tuple[ast.Module, str] | None:
    """The parsed module text of ``MODULE:OBJ`` and ``OBJ``; None where it cannot be read."""
    module, _, obj = source.partition(":")
    if not module or not obj or not obj.isidentifier():
        return None
    path = module_file(module, search)
    if path is None:
        return None
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None  # a FIFO or a device declares nothing
            raw = handle.read(MAX_SOURCE_BYTES + 1)
        if len(raw) > MAX_SOURCE_BYTES:
            return None
        return ast.parse(raw, str(path)), obj
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def source_declaration(source: str, attribute: str, search: list[str]) -> str | None:
    """What ``MODULE:OBJ`` declares as ``attribute`` in its module's source text; None if nothing.

    Args:
        source: the ``--kernel`` as given, ``MODULE:OBJ``.
        attribute: the declared attribute, e.g. ``nan_policy``.
        search: the module search path (the kernel's process gets the same).
    """
    found = _parsed(source, search)
    if found is None:
        return None
    tree, obj = found
    node = _declared_node(tree, obj, attribute)
    return None if node is None else _text(node, _literals(tree))


def source_call(
    source: str, attribute: str, callee: str, search: list[str]
) -> dict[str, Any] | None:
    """The literal arguments of ``attribute = callee(...)`` in ``MODULE:OBJ``'s source text.

    Only a call of ``callee`` (by name, or as ``module.callee``) whose
    arguments are all literals (numbers, strings, booleans, tuples) counts;
    positional arguments come back under ``"args"``, keywords by name. None
    where the source declares no such call; anything computed is refused by
    raising, as a declaration fp8lab cannot read.

    Raises:
        ValueError: for a call of ``callee`` with an argument that is not a literal.
    """
    found = _parsed(source, search)
    if found is None:
        return None
    node = _declared_node(*found, attribute)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name != callee:
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
        raise ValueError(
            f"{attribute} = {callee}(...) has an argument that is not a literal"
        ) from exc
    if len(kwargs) != len(node.keywords):
        raise ValueError(f"{attribute} = {callee}(**...) is not a literal declaration")
    return {"args": args, **kwargs}
