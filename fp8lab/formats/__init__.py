"""Formats as data: :class:`FormatSpec` and the catalogue.

``ml_dtypes_type`` is imported on first use (PEP 562): the catalogue itself
needs only the standard library, so the command line can list format names
without loading ml_dtypes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lab.formats.catalogue import FORMATS, FP8_FORMATS, get_format
from fp8lab.formats.spec import FormatSpec, NanEncoding

if TYPE_CHECKING:
    from fp8lab.formats.interop import ml_dtypes_type

__all__ = ["FORMATS", "FP8_FORMATS", "FormatSpec", "NanEncoding", "get_format", "ml_dtypes_type"]


def __getattr__(name: str) -> Any:
    """``ml_dtypes_type`` from :mod:`fp8lab.formats.interop`, on first use."""
    if name == "ml_dtypes_type":
        from fp8lab.formats.interop import ml_dtypes_type

        return ml_dtypes_type
    raise AttributeError(f"module 'fp8lab.formats' has no attribute {name!r}")
