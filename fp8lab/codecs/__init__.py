"""Codecs: the fast encoder (table and bit-field engines), its twins, and the decoder."""

from fp8lab.codecs.api import ENGINES, METHODS, as_ml_dtypes, decode, decode_table, encode
from fp8lab.codecs.policy import SpecialCodes, codec_nan_policy, special_codes

__all__ = [
    "ENGINES",
    "METHODS",
    "SpecialCodes",
    "as_ml_dtypes",
    "codec_nan_policy",
    "decode",
    "decode_table",
    "encode",
    "special_codes",
]
