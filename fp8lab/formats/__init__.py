"""Formats as data: :class:`FormatSpec` and the catalogue."""

from fp8lab.formats.catalogue import FORMATS, FP8_FORMATS, get_format
from fp8lab.formats.interop import ml_dtypes_type
from fp8lab.formats.spec import FormatSpec, NanEncoding

__all__ = ["FORMATS", "FP8_FORMATS", "FormatSpec", "NanEncoding", "get_format", "ml_dtypes_type"]
