"""Dynamic and block scaling schemes: the rules as data.

The package itself holds data only, so the exact reference
(:mod:`fp8lab.refs.schemes`) can read the rules without loading the kernel
port, :mod:`fp8lab.schemes.port` (``fp8lab.scheme_quant``).
"""

from fp8lab.schemes.nvfp4_rules import NVFP4_RULES, Nvfp4Inverse, Nvfp4Order, Nvfp4ScaleRule
from fp8lab.schemes.rules import (
    RULES,
    AmaxNan,
    Apply,
    Clamp,
    Granularity,
    Pow2,
    ScaleRule,
    get_rule,
)

__all__ = [
    "NVFP4_RULES",
    "RULES",
    "Nvfp4Inverse",
    "Nvfp4Order",
    "Nvfp4ScaleRule",
    "AmaxNan",
    "Apply",
    "Clamp",
    "Granularity",
    "Pow2",
    "ScaleRule",
    "get_rule",
]
