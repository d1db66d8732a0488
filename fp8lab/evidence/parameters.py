"""A notebook's declared parameters, and the check of a run's values against their types.

The ``parameters`` cell declares each parameter as ``name: type = literal``
(STYLE: typed literal defaults). The cell is read with :mod:`ast`, not run.
Types understood: ``bool``, ``int``, ``float``, ``str``, ``list``, ``dict``,
``list[T]``, ``dict[str, T]`` and unions ``A | B`` (``None`` included). ``bool`` is
not an ``int``; an ``int`` is a ``float`` (PEP 484's numeric tower).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

__all__ = [
    "OWNED_BY_RUNNER",
    "Declared",
    "ParameterError",
    "check_overrides",
    "declared_parameters",
    "non_default",
    "parameters_record",
]

OWNED_BY_RUNNER = ("run_dir",)
_SCALARS: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "None": (type(None),),
    "list": (list,),
    "dict": (dict,),
}


class ParameterError(ValueError):
    """A parameter the notebook does not take, or a value not of its declared type."""


@dataclass(frozen=True)
class Declared:
    """One parameter of the ``parameters`` cell."""

    name: str
    annotation: str
    default: Any


def declared_parameters(path: Path) -> dict[str, Declared]:
    """The annotated assignments of the cell tagged ``parameters``, in order.

    Raises:
        ParameterError: no such cell, or an entry that is not ``name: type = literal``.
    """
    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ParameterError(f"{path.name}: wants one cell tagged parameters, has {len(cells)}")
    try:
        body = ast.parse(cells[0].source).body
    except SyntaxError as exc:
        raise ParameterError(f"{path.name}: parameters cell: {exc}") from None
    declared = {}
    for node in body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            raise ParameterError(f"{path.name}: line {node.lineno} is not `name: type = literal`")
        if node.value is None:
            raise ParameterError(f"{path.name}: {node.target.id} has no default")
        name = node.target.id
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            raise ParameterError(f"{path.name}: {name}'s default is not a literal") from None
        declared[name] = Declared(name, ast.unparse(node.annotation), default)
    return declared


def _matches(value: Any, annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _matches(value, annotation.left) or _matches(value, annotation.right)
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return value is None
    if isinstance(annotation, ast.Name) and annotation.id in _SCALARS:
        wanted = _SCALARS[annotation.id]
        return isinstance(value, wanted) and not (isinstance(value, bool) and bool not in wanted)
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        args = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
        if annotation.value.id == "list" and isinstance(value, list):
            return all(_matches(v, annotation.slice) for v in value)
        if annotation.value.id == "dict" and isinstance(value, dict) and len(args) == 2:
            return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
        return False
    raise ParameterError(f"the annotation {ast.unparse(annotation)!r} is not one fp8lab checks")


def check_overrides(path: Path, overrides: Mapping[str, Any]) -> dict[str, Declared]:
    """Refuse unknown names, names the runner owns and values of the wrong type.

    Returns:
        The declared parameters.

    Raises:
        ParameterError: one line naming the notebook, the parameter and the types.
    """
    declared = declared_parameters(path)
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise ParameterError(
            f"{path.stem}: unknown parameters {unknown}; it takes {sorted(declared)}"
        )
    for name, value in overrides.items():
        if name in OWNED_BY_RUNNER:
            raise ParameterError(f"{path.stem}: {name} is set by the runner, not by -p/--params")
        annotation = ast.parse(declared[name].annotation, mode="eval").body
        if not _matches(value, annotation):
            raise ParameterError(
                f"{path.stem}: parameter {name} wants {declared[name].annotation}, "
                f"got {value!r} ({type(value).__name__})"
            )
    return declared


def non_default(params: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a run that differ from ``defaults`` (runner-owned ones left out)."""
    return {
        name: value
        for name, value in params.items()
        if name not in OWNED_BY_RUNNER
        and (name not in defaults or not _same(value, defaults[name]))
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float):
        return type(a) is type(b) and bool(a == b)
    return isinstance(b, int | float) and a == b  # 1 and 1.0 are the same value


def parameters_record(params: Mapping[str, Any]) -> bytes:
    """The ``parameters.yaml`` of a run: the values it ran with, runner-owned ones left out."""
    shown = {k: v for k, v in params.items() if k not in OWNED_BY_RUNNER}
    header = (
        "# The parameters this run used. run_dir is not listed: the runner set it\n"
        "# to this run's directory while it was being built.\n"
    )
    text: str = yaml.safe_dump(shown, sort_keys=True)
    return (header + text).encode()
