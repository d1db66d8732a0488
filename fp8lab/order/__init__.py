"""Accumulation order: infer a kernel's summation tree (FPRev) and name its family.

FPRev: Xie et al., "FPRev: Revealing the Order of Floating-Point Summation".
"""

from fp8lab.order.declare import inferred_spec
from fp8lab.order.families import (
    Family,
    fused_tree,
    lanes_tree,
    name_family,
    pairwise_tree,
    sequential_tree,
    split_k_tree,
)
from fp8lab.order.infer import METHODS, OrderRecord, infer_order, infer_tree
from fp8lab.order.probe import (
    FP8_SAFE_K,
    F32MatmulProbe,
    Fp8MatmulProbe,
    LcaProbe,
    ProbeError,
    SumProbe,
)
from fp8lab.order.run import tree_matmul
from fp8lab.order.tree import SumTree, tree_from_nested

__all__ = [
    "FP8_SAFE_K",
    "METHODS",
    "F32MatmulProbe",
    "Family",
    "Fp8MatmulProbe",
    "LcaProbe",
    "OrderRecord",
    "ProbeError",
    "SumProbe",
    "SumTree",
    "fused_tree",
    "infer_order",
    "infer_tree",
    "inferred_spec",
    "lanes_tree",
    "name_family",
    "pairwise_tree",
    "sequential_tree",
    "split_k_tree",
    "tree_from_nested",
    "tree_matmul",
]
