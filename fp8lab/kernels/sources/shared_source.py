"""How a kernel source names a shared library: ``PATH:SYMBOL`` with a library's suffix.

Plain string work, kept apart from the C ABI (:mod:`fp8lab.kernels.sources.shared_abi`,
which needs ml_dtypes) so that telling a library from a module costs nothing.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHARED_SUFFIXES", "is_shared_source", "split_shared_source"]

SHARED_SUFFIXES = (".so", ".dylib", ".dll")


def is_shared_source(source: str) -> bool:
    """``PATH:SYMBOL`` whose PATH names a shared library (by its suffix)."""
    path = source.rpartition(":")[0]
    name = Path(path).name
    return bool(path) and (name.endswith(SHARED_SUFFIXES) or ".so." in name)


def split_shared_source(source: str) -> tuple[str, str]:
    """``PATH:SYMBOL`` -> (PATH, SYMBOL); the last colon splits.

    Raises:
        ValueError: if either part is empty.
    """
    path, _, symbol = source.rpartition(":")
    if not path or not symbol:
        raise ValueError(f"{source!r} is not of the form path/lib.so:symbol")
    return path, symbol
