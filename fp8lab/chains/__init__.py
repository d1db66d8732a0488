"""Fused chains (issue 15): recipes as data, their production-style ports, populations.

The references that check them are in ``fp8lab.refs.chain_ref``; gate GF is
``fp8lab.gates.gf``.
"""

from fp8lab.chains.catalogue import RECIPES, STANDALONE, recipe_names
from fp8lab.chains.recipe import CHAINS, EXP_VARIANTS, OPS, RSQRT_VARIANTS, Chain, Step

__all__ = [
    "CHAINS",
    "EXP_VARIANTS",
    "OPS",
    "RECIPES",
    "RSQRT_VARIANTS",
    "STANDALONE",
    "Chain",
    "Step",
    "recipe_names",
]
