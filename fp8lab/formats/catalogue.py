"""The catalogue of formats fp8lab knows: declarations only (OCP OFP8; ml_dtypes names)."""

from __future__ import annotations

from types import MappingProxyType

from fp8lab.formats.spec import FormatSpec, NanEncoding

__all__ = ["FORMATS", "get_format"]

_DECLARED = (
    FormatSpec("e4m3fn", 4, 3, 7, NanEncoding.ALL_ONES, has_inf=False, has_negative_zero=True),
    FormatSpec("e5m2", 5, 2, 15, NanEncoding.IEEE, has_inf=True, has_negative_zero=True),
    FormatSpec(
        "e4m3fnuz", 4, 3, 8, NanEncoding.NEGATIVE_ZERO, has_inf=False, has_negative_zero=False
    ),
    FormatSpec(
        "e5m2fnuz", 5, 2, 16, NanEncoding.NEGATIVE_ZERO, has_inf=False, has_negative_zero=False
    ),
)

FORMATS: MappingProxyType[str, FormatSpec] = MappingProxyType({f.name: f for f in _DECLARED})


def get_format(fmt: str | FormatSpec) -> FormatSpec:
    """Look a format up by name, or pass a :class:`FormatSpec` through.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(fmt, FormatSpec):
        return fmt
    try:
        return FORMATS[fmt]
    except (KeyError, TypeError):
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}") from None
