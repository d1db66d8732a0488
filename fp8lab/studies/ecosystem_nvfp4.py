"""The ecosystem table's NVFP4 amax split: two rules' block bytes and multipliers per block amax.

Each float32 pattern is one block's amax, at one global amax for the tensor
(:data:`NVFP4_GLOBAL_AMAX`, 2688: TransformerEngine's ``S_enc`` and torchao's
per-tensor scale are both 1 there). Under each rule the numpy port gives the
block-scale byte the kernel stores
(:func:`~fp8lab.kernels.scheme.nvfp4_stored_scales`) and the float32 element
multiplier that byte gives (:func:`~fp8lab.kernels.scheme.nvfp4_multipliers`,
one per byte value, so a lookup per pattern). :func:`nvfp4_split_chunk` counts
the patterns where the bytes differ and where the multipliers differ (by their
bits; any two NaNs alike), as :func:`fp8lab.studies.ecosystem.amax_split` asks
of its chunks.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.kernels.scheme import nvfp4_multipliers, nvfp4_stored_scales
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, ScaleRule

__all__ = [
    "NVFP4_FULL_SPLITS",
    "NVFP4_GLOBAL_AMAX",
    "any_rule",
    "declared",
    "nvfp4_pair",
    "nvfp4_split_chunk",
    "nvfp4_split_verdicts",
]

#: the global amax of every swept block: TE's S_enc = fminf(2688 / g, FLT_MAX) = 1, torchao's
#: S = fl(g / 2688) = 1
NVFP4_GLOBAL_AMAX = 2688.0

# (library rule, spec rule) -> (bytes differ, multipliers differ, of the first: NaN amax) over
# all 2**31 non-negative block-amax patterns at NVFP4_GLOBAL_AMAX (docs/rules.md explains them)
NVFP4_FULL_SPLITS: dict[tuple[str, str], tuple[int, int, int]] = {
    # torchao clamps the block scale up to 2**-6 below amax 0.09375 (1_035_993_088 patterns),
    # where TE's byte is lower but on [0.087890625, 0.09375) (786_432, rounded up to 2**-6);
    # a NaN amax: torchao's byte 0x7F, TE's fminf(NaN, FLT_MAX) -> 0x7E. At S = 1 both
    # multipliers are fl(1 / d): they differ exactly where the bytes do.
    ("torchao-0.18-nvfp4", "te-nvfp4-divide"): (1_043_595_263, 1_043_595_263, 8_388_607),
}

_BYTES = np.arange(256, dtype=np.uint8)
_NAN_BITS = np.uint32(0x7FC0_0000)


def nvfp4_pair(own_rule: str, spec_rule: str) -> tuple[Nvfp4ScaleRule, Nvfp4ScaleRule]:
    """The two NVFP4 rules, each with its element path modelled.

    Raises:
        ValueError: for a name that is not an NVFP4 rule, or one without an element path.
    """
    rules = []
    for name in (own_rule, spec_rule):
        rule = NVFP4_RULES.get(name)
        if rule is None or rule.element_source is None:
            raise ValueError(f"{name}: not an NVFP4 rule with a modelled element path")
        rules.append(rule)
    return rules[0], rules[1]


def _multiplier_bits(rule: Nvfp4ScaleRule, global_amax: float) -> npt.NDArray[np.uint32]:
    """The multiplier of every byte value as float32 bits, every NaN as one pattern."""
    m = nvfp4_multipliers(_BYTES, np.asarray(global_amax, np.float32), rule)
    return np.where(np.isnan(m), _NAN_BITS, m.view(np.uint32)).astype(np.uint32)


def nvfp4_split_verdicts(
    amax: npt.NDArray[np.float32],
    own_rule: str,
    spec_rule: str,
    global_amax: float = NVFP4_GLOBAL_AMAX,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per block amax: ``(the stored bytes differ, the element multipliers differ)``."""
    own, spec = nvfp4_pair(own_rule, spec_rule)
    g = np.asarray(global_amax, np.float32)
    a, b = nvfp4_stored_scales(amax, g, own), nvfp4_stored_scales(amax, g, spec)
    # one lookup per pattern: do byte a (own) and byte b (spec) give different multipliers?
    moved = np.take(_apart(own_rule, spec_rule, global_amax), (a.astype(np.uint16) << 8) | b)
    return np.asarray(a != b), moved


@cache
def _apart(own_rule: str, spec_rule: str, global_amax: float) -> npt.NDArray[np.bool_]:
    """For byte ``a << 8 | b``: whether own's byte a and spec's byte b give different multipliers.

    The same for every block amax, so it is made once per pair and global amax; read-only.
    """
    own, spec = nvfp4_pair(own_rule, spec_rule)
    apart = _multiplier_bits(own, global_amax)[:, None] != _multiplier_bits(spec, global_amax)
    table: npt.NDArray[np.bool_] = np.asarray(apart).reshape(-1)
    table.setflags(write=False)
    return table


def nvfp4_split_chunk(
    own_rule: str, spec_rule: str, lo: int, hi: int, global_amax: float = NVFP4_GLOBAL_AMAX
) -> tuple[int, int, int, int]:
    """One chunk's ``(bytes differ, multipliers differ, bytes differ at a NaN, first split)``."""
    amax = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
    split, moved = nvfp4_split_verdicts(amax, own_rule, spec_rule, global_amax)
    first = lo + int(np.argmax(split)) if split.any() else -1
    return int(split.sum()), int(moved.sum()), int((split & np.isnan(amax)).sum()), first


def declared(name: str) -> bool:
    """Whether this build declares the rule ``name`` (a scale rule or an NVFP4 rule)."""
    return name in RULES or name in NVFP4_RULES


def any_rule(name: str) -> ScaleRule | Nvfp4ScaleRule:
    """The scale rule or NVFP4 rule ``name``.

    Raises:
        KeyError: for a rule this build does not declare.
    """
    return RULES.get(name) or NVFP4_RULES[name]
