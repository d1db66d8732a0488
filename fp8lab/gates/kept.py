"""A gate's exact expectations kept per input digest across gate runs in one process.

The most recent :attr:`Kept.keep` values are kept; a value is frozen
(made read-only) when it is first computed and handed out as it is after.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Kept"]

V = TypeVar("V")


class Kept(Generic[V]):
    """The ``keep`` most recently used values, by key."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._kept: OrderedDict[bytes, V] = OrderedDict()

    def get(self, key: bytes, compute: Callable[[], V], freeze: Callable[[V], None]) -> V:
        """The value kept under ``key``, else ``compute()`` frozen and kept (not if it raises)."""
        found = self._kept.get(key)
        if found is None:
            found = compute()
            freeze(found)
            self._kept[key] = found
            while len(self._kept) > self.keep:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
        return found
