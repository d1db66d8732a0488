"""Codecs: the fast encoder, its array and scalar twins, and the decoder."""

from fp8lab.codecs.api import METHODS, as_ml_dtypes, decode, decode_table, encode
from fp8lab.codecs.policy import NanPolicy, SpecialCodes, nan_policy, special_codes

__all__ = [
    "METHODS",
    "NanPolicy",
    "SpecialCodes",
    "as_ml_dtypes",
    "decode",
    "decode_table",
    "encode",
    "nan_policy",
    "special_codes",
]
