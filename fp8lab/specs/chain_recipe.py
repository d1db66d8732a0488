"""Chains as data: a recipe is a list of steps, each naming its rounding.

This module imports the standard library only, so both the references
(``fp8lab.refs.chain_ref``) and the production-style ports read the same
declaration without sharing any arithmetic code.

A value's type is one of ``"bf16"``, ``"f32"`` or ``"e4m3fn"``. ``rounds`` lists
the roundings a step applies to its exact result, in order: ``("f32",)`` is one
IEEE float32 rounding, ``("f32", "bf16")`` is a float32 result then stored to
bf16 (two roundings, as ``(scalar_t)(a * b)`` in CUDA or c10's ``BFloat16``
operators), ``("bf16",)`` one rounding of the exact value to bf16.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHAINS", "EXP_VARIANTS", "OPS", "RSQRT_VARIANTS", "Chain", "Step"]

CHAINS = ("rmsnorm", "rmsnorm-gated", "silu-mul")
# Every operation a step may name; the refs and the ports switch on these names.
OPS = (
    "add_residual",  # z = x + residual; the residual output is z stored to bf16
    "square_reduce",  # acc = sum_j z_j * z_j over the row, in ``order``
    "mean_eps",  # m = acc / H + eps
    "rsqrt",  # r = 1/sqrt(m), by ``variant``
    "normalize",  # n = z * r
    "weight",  # y = n * w (or n * (w + 1) with ``gemma``)
    "gate_silu",  # y = y * silu(gate) (gated RMSNorm, after the norm)
    "silu",  # a = g / (1 + exp(-g)), exp by ``variant``
    "mul_up",  # p = a * up
    "quant",  # e4m3fn(clamp(v * fl32(1/s))), NaN -> nan_code
)
# rsqrt: ``cr`` the correctly rounded 1/sqrt(m); ``div-sqrt`` 1.0f / sqrtf(m),
# two IEEE roundings. CUDA's rsqrtf (max 2 ulp, CUDA C Programming Guide, Math
# functions) is not reproduced bit for bit from any source, so it is not a variant.
RSQRT_VARIANTS = ("cr", "div-sqrt")
# exp: ``cr`` the correctly rounded exp; ``exp2-f32-product`` the correctly
# rounded 2**fl32(x * fl32(log2 e)), the structure of CUDA's __expf
# (ex2.approx of a float32 product) without modelling ex2.approx itself: a
# named stand-in for a fast exp, not a bit-exact __expf.
EXP_VARIANTS = ("cr", "exp2-f32-product")


@dataclass(frozen=True)
class Step:
    """One step of a chain.

    Args:
        op: one of :data:`OPS`.
        inputs: the types it reads.
        output: the type it writes (after ``rounds``).
        rounds: the roundings applied to the exact result, in order; ``()`` for
            none (a reduction names its accumulator rounding here).
        order: for ``square_reduce``, the summation order (``"sequential"``:
            j = 0, 1, ..., H-1 into one float32 accumulator, no FMA).
        variant: for ``rsqrt`` and ``silu``, the elementary-function variant.
        gemma: for ``weight``, multiply by ``fl32(w + 1)`` (GemmaRMSNorm).
        nan_code: for ``quant``, the byte a NaN becomes (0x7F or 0x7E).
        source: where the step's semantics come from.
    """

    op: str
    inputs: tuple[str, ...]
    output: str
    rounds: tuple[str, ...] = ()
    order: str = ""
    variant: str = ""
    gemma: bool = False
    nan_code: int = 0x7F
    source: str = ""


@dataclass(frozen=True)
class Chain:
    """A named recipe: its chain kind, its steps in order and its source."""

    name: str
    chain: str
    steps: tuple[Step, ...]
    source: str

    def step(self, op: str) -> Step | None:
        """The first step named ``op``, or None."""
        return next((s for s in self.steps if s.op == op), None)

    def ops(self) -> tuple[str, ...]:
        """The step names in order."""
        return tuple(s.op for s in self.steps)

    def gemma(self) -> bool:
        """Whether the weight step multiplies by ``w + 1`` (Gemma): another function."""
        weight = self.step("weight")
        return weight is not None and weight.gemma
