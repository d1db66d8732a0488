"""A package's public names, imported from their home modules on first use (PEP 562).

A package that lists its names in a ``{name: module}`` table and sets
``__getattr__, __dir__ = lazy_names(__name__, HOMES)`` loads no home module
until one of its names is read, so importing one of its modules (as a
kernel's process or ``fp8lab --help`` does) pays for nothing else.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports ``homes``' names."""
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value  # the next read finds it without asking again
        return value

    def listing() -> list[str]:
        return sorted([*namespace, *homes])

    return load, listing
