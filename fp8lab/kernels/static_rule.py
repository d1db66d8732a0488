"""The numpy port of every static rule: :func:`~fp8lab.kernels.scheme.scheme_quant`'s element path.

A static rule (``scale_source = "given"``) takes its scales from the caller;
:func:`static_quant` hands them to the scheme port, which then runs the
rule's element path as production code does (float32 array arithmetic,
``ml_dtypes`` bfloat16, the fast codec). A per-tensor rule takes an ``x`` of
any shape and one float32 scale, as G1's seed kernels do; a per-row or
per-block rule an ``x`` [M, K] and its float32 scales [M] or [M, K/block].
:class:`StaticRulePort` is the port of one named rule as a G1 kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.specs.scale_rules import Granularity, ScaleRule
from fp8lab.specs.static_rules import STATIC_RULES, get_static_rule

__all__ = ["STATIC_PORTS", "StaticRulePort", "g1_builtins", "static_quant"]


def static_quant(x: np.ndarray, scales: Any, rule: str | ScaleRule) -> npt.NDArray[np.uint8]:
    """Codes of ``x`` (float32 or bfloat16) under the static ``rule`` and the given ``scales``.

    Raises:
        TypeError: for an x that is not float32 or bfloat16.
        ValueError: for an unknown or dynamic rule, or scales or x of the wrong shape.
    """
    spec = get_static_rule(rule)
    widen_activation(x)  # the input contract: float32 or bfloat16
    arr = np.asarray(x)
    tensor = spec.granularity is Granularity.TENSOR
    rows = arr.reshape(1, -1) if tensor else arr
    if rows.ndim != 2:
        raise ValueError(f"{spec.name}: x must be [M, K], got shape {arr.shape}")
    codes, _ = scheme_quant(rows, spec, np.asarray(scales, np.float32))
    return codes.reshape(arr.shape)


@dataclass(frozen=True)
class StaticRulePort:
    """The port of one static rule as a G1 kernel, named after its rule (NaN policy canonical)."""

    name: str

    def quantize(self, x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
        """:func:`static_quant` under this port's rule."""
        return static_quant(x, scale, self.name)


# rule name -> its port: G1's built-in kernel for a --rule without --kernel
STATIC_PORTS: MappingProxyType[str, StaticRulePort] = MappingProxyType(
    {name: StaticRulePort(name) for name in STATIC_RULES}
)


def g1_builtins(**options: Any) -> list[Any]:
    """G1's own kernels for one run: the named static rule's port, else the seed's kernels."""
    from fp8lab.kernels.quant import BUILTIN_KERNELS

    rule = options.get("rule")
    if rule is None:
        return list(BUILTIN_KERNELS.values())
    name = getattr(rule, "name", rule)
    return [STATIC_PORTS[name]]
