"""Resolve a user's ``MODULE:OBJ`` to the object it names.

MODULE is looked up as ``python -m`` and pytest look it up: the current
directory comes first on ``sys.path``, so ``--kernel mykern:quant`` finds
``./mykern.py`` without ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

__all__ = ["ImportSpecError", "import_attribute", "import_object"]


class ImportSpecError(ValueError):
    """A ``MODULE:OBJ`` that is malformed, cannot be imported or is not callable."""


def import_attribute(spec: str) -> Any:
    """Import ``MODULE:ATTR[.ATTR...]`` and return whatever object it names.

    Raises:
        ImportSpecError: saying which step failed: the form, the import or the
            attribute lookup.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ImportSpecError(f"{spec!r} is not of the form MODULE:FUNC or MODULE:OBJ")
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


def import_object(spec: str) -> Any:
    """Import ``MODULE:FUNC`` and return the callable it names.

    Raises:
        ImportSpecError: as :func:`import_attribute`, or if the object is not callable.
    """
    target = import_attribute(spec)
    if not callable(target):
        raise ImportSpecError(f"{spec!r} is not callable")
    return target
