"""What one command asks of the gates, resolved once at the edge: :class:`GateOptions`.

The command line builds one value per command from its flags (the NaN policy
held, the shard scales, ``--large``, the chains and the schemes with their
rules) and hands it down; each gate takes the fields its
:class:`~fp8lab.specs.gates.Gate` record names, as typed objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fp8lab.specs.nan import HeldNanPolicy

if TYPE_CHECKING:
    from fp8lab.specs.gates import Gate
    from fp8lab.specs.nvfp4_rules import Nvfp4ScaleRule
    from fp8lab.specs.scale_rules import ScaleRule

__all__ = ["ChainChoice", "GateOptions", "GateRun", "SchemeChoice"]


@dataclass(frozen=True)
class ChainChoice:
    """A fused chain and the recipe a GF kernel computes."""

    chain: str
    recipe: str


@dataclass(frozen=True)
class SchemeChoice:
    """A GQ scheme and the rule (built in, or from a rule file) its kernel follows."""

    scheme: str
    rule: ScaleRule | Nvfp4ScaleRule


@dataclass(frozen=True)
class GateRun:
    """One run of a gate: the runner's keywords, and the record fields any record of it carries.

    ``record`` names what the run was held to (a scheme and rule), so even the
    record of a kernel whose process died before a case says so.
    """

    options: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GateOptions:
    """The gates' options for one command.

    Args:
        nan_policy: the NaN policy a quant kernel is held to; None: each of
            fp8lab's own kernels is held to the one it declares.
        shard_scales: G1's shard case (empty: none).
        large: G3's 1024x1024 cases.
        gemm: G3's GEMM keywords: the ``declaration`` it checks against (absent:
            the kernel's own model) and the ``warmup`` calls.
        chains: GF's chains and recipes, one run each.
        schemes: GQ's schemes and rules, one run each.
        static_rule: G1's static rule (None: the seed's, the default).
    """

    nan_policy: HeldNanPolicy | None = None
    shard_scales: tuple[float, ...] = ()
    large: bool = False
    gemm: dict[str, Any] = field(default_factory=dict)
    chains: tuple[ChainChoice, ...] = ()
    schemes: tuple[SchemeChoice, ...] = ()
    static_rule: ScaleRule | None = None

    def runs(self, gate: Gate) -> list[GateRun]:
        """The runs of ``gate``: one per chain or scheme when it takes them, else one."""
        base: dict[str, Any] = {}
        if "nan_policy" in gate.options and self.nan_policy is not None:
            base["nan_policy"] = self.nan_policy
        if "shard_scales" in gate.options and self.shard_scales:
            base["shard_scales"] = self.shard_scales
        if "large" in gate.options:
            base["large"] = self.large
        if "gemm" in gate.options:
            base.update(self.gemm)
        record: dict[str, Any] = {}
        if "static_rule" in gate.options and self.static_rule is not None:
            base["rule"] = self.static_rule
            record["rule"] = self.static_rule.name
        runs = [GateRun(base, record)]
        if "chains" in gate.options:
            runs = [GateRun({**base, "chain": c.chain, "recipe": c.recipe}) for c in self.chains]
        if "schemes" in gate.options:
            runs = [
                GateRun(
                    {**base, "scheme": s.scheme, "rule": s.rule},
                    {"scheme": s.scheme, "rule": s.rule.name},
                )
                for s in self.schemes
            ]
        return runs
