"""The one Python loader: a user's ``MODULE:OBJ`` as the kernel object it names.

MODULE is looked up as ``python -m`` and pytest look it up: the current
directory comes first on ``sys.path``, so ``--kernel mykern:quant`` finds
``./mykern.py`` without ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["ImportSpecError", "import_attribute", "load_python_kernel"]


class ImportSpecError(ValueError):
    """A ``MODULE:OBJ`` that is malformed, cannot be imported or is not callable."""


def import_attribute(source: str) -> Any:
    """Import ``MODULE:ATTR[.ATTR...]`` and return whatever object it names.

    Raises:
        ImportSpecError: saying which step failed: the form, the import or the
            attribute lookup.
    """
    module_name, sep, attr = source.partition(":")
    if not sep or not module_name or not attr:
        raise ImportSpecError(f"{source!r} is not of the form MODULE:FUNC or MODULE:OBJ")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported plainly
        raise ImportSpecError(
            f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ImportSpecError(f"module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    return target


def load_python_kernel(
    source: str, protocol: type | None, wrap: Callable[[str, Any], Any] | None = None
) -> Any:
    """``MODULE:OBJ`` as a kernel: a ``protocol`` object as it is, a function wrapped.

    Every ``--kernel`` of every subcommand and every detector's kernel name
    comes through here. With ``protocol`` None, any callable is taken; with
    ``wrap`` None, a function is returned as it is.

    Raises:
        ImportSpecError: as :func:`import_attribute`, or if OBJ is neither a
            ``protocol`` object nor callable.
    """
    target = import_attribute(source)
    if protocol is not None and isinstance(target, protocol) and not isinstance(target, type):
        return target
    if callable(target):
        return target if wrap is None else wrap(source, target)
    kind = type(target).__name__
    if protocol is None:
        raise ImportSpecError(f"{source!r} is a {kind}, not callable")
    raise ImportSpecError(
        f"{source!r} is a {kind}: neither a {protocol.__name__} object nor a function"
    )
