"""Codecs: the fast encoder, its array and scalar twins, and the decoder."""

from fp8lab.codecs.api import METHODS, as_ml_dtypes, decode, decode_table, encode
from fp8lab.codecs.policy import SpecialCodes, codec_nan_policy, special_codes

__all__ = [
    "METHODS",
    "SpecialCodes",
    "as_ml_dtypes",
    "codec_nan_policy",
    "decode",
    "decode_table",
    "encode",
    "special_codes",
]
