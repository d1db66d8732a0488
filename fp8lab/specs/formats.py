"""The catalogue of formats fp8lab knows: declarations only (OCP OFP8, OCP MX v1.0).

:data:`FORMATS` holds every declaration. :data:`FP8_FORMATS` is the subset the
fp8 element machinery (gates, detectors, atlas, the sweep and design CLIs) is
built for: signed, 8 bits, with a zero. The MX scale and element formats
(``e8m0fnu``, ``e2m1fn``, ``e2m3fn``, ``e3m2fn``) go through the codecs, the
scan reference and the exhaustive proofs like the others.
"""

from __future__ import annotations

from types import MappingProxyType

from fp8lab.specs.format import FormatSpec, NanEncoding

__all__ = ["FORMATS", "FP8_FORMATS", "get_format"]

_DECLARED = (
    FormatSpec("e4m3fn", 4, 3, 7, NanEncoding.ALL_ONES, has_inf=False, has_negative_zero=True),
    FormatSpec("e5m2", 5, 2, 15, NanEncoding.IEEE, has_inf=True, has_negative_zero=True),
    FormatSpec(
        "e4m3fnuz", 4, 3, 8, NanEncoding.NEGATIVE_ZERO, has_inf=False, has_negative_zero=False
    ),
    FormatSpec(
        "e5m2fnuz", 5, 2, 16, NanEncoding.NEGATIVE_ZERO, has_inf=False, has_negative_zero=False
    ),
    # OCP MX v1.0, E8M0 scale: the shared scale, 2**(code - 127), code 0xFF NaN, no zero, no sign.
    FormatSpec(
        "e8m0fnu",
        8,
        0,
        127,
        NanEncoding.ALL_ONES,
        has_inf=False,
        has_negative_zero=False,
        signed=False,
        has_subnormals=False,
    ),
    # OCP MX v1.0, FP6/FP4 elements: FP6 and FP4 elements, no inf and no NaN.
    FormatSpec("e2m3fn", 2, 3, 1, NanEncoding.NONE, has_inf=False, has_negative_zero=True),
    FormatSpec("e3m2fn", 3, 2, 3, NanEncoding.NONE, has_inf=False, has_negative_zero=True),
    FormatSpec("e2m1fn", 2, 1, 1, NanEncoding.NONE, has_inf=False, has_negative_zero=True),
)

FORMATS: MappingProxyType[str, FormatSpec] = MappingProxyType({f.name: f for f in _DECLARED})
FP8_FORMATS: MappingProxyType[str, FormatSpec] = MappingProxyType(
    {f.name: f for f in _DECLARED if f.signed and f.bits == 8 and f.has_zero}
)


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
