"""Scale rules as data: every choice implementations make differently is a named field.

A rule turns one block of float32 values into one scale and the element codes.
This module is data only (standard library), so the exact reference
(:mod:`fp8lab.refs.schemes`) and the kernel port (:mod:`fp8lab.kernels.scheme`)
read the same declaration and share no code. Each rule's ``source`` names the
implementation it was read from, at a commit; the TransformerEngine NVFP4 lines
say where they could not be checked against the file.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "RULES",
    "AmaxNan",
    "Apply",
    "Clamp",
    "Granularity",
    "Pow2",
    "ScaleRule",
    "get_rule",
]


class Granularity(enum.Enum):
    """What one scale covers: the tensor, a row (token), or ``block`` elements of a row."""

    TENSOR = "tensor"
    ROW = "row"
    BLOCK = "block"


class AmaxNan(enum.Enum):
    """NaN in the scale-side max/min (amax reduction, eps floor, ``scale_ub``, ``min_scale``).

    ``SKIP`` is C ``fmaxf``/``fminf`` (CUDA kernels); ``PROPAGATE`` is
    ``torch.amax`` / ``Tensor.max`` / ``torch.clamp``, where NaN wins.
    """

    SKIP = "skip"
    PROPAGATE = "propagate"


class Apply(enum.Enum):
    """How a float32 quotient is formed: ``a / b``, or ``a * float32(1 / b)``."""

    DIVIDE = "divide"
    RECIPROCAL = "reciprocal"


class Pow2(enum.Enum):
    """Rounding the scale to a power of two, from the float32 exponent bits.

    ``NONE`` keeps the float32 scale. ``CEIL_BITS`` is vLLM's UE8M0 scale, a
    float32 ``2**(exp + (mantissa != 0))`` (the bit form its register kernel
    states is equal to ``exp2f(ceilf(log2f(s)))``). ``OCP_FLOOR`` is OCP MX v1.0
    §6.3's ``2**(floor(log2(amax)) - emax_elem)`` as an e8m0 byte, with the
    exponent read from the bits (torchao FLOOR). ``RCEIL`` is NVIDIA's rule, the
    e8m0 byte of ``amax * float32(1/max_elem)`` rounded up (torchao
    ``_f32_to_e8m0_rceil``; TE ``float_to_e8m0``).
    """

    NONE = "none"
    CEIL_BITS = "ceil-bits"
    OCP_FLOOR = "ocp-floor"
    RCEIL = "rceil"


class Clamp(enum.Enum):
    """The clamp before the cast, which decides where NaN goes.

    ``MIN_THEN_MAX`` is ``fmaxf(-M, fminf(x, M))``: NaN -> +M (vLLM common.cuh).
    ``MAX_THEN_MIN`` is ``fminf(fmaxf(x, -M), M)``: NaN -> -M (vLLM per-group).
    ``TORCH`` is ``torch.clamp(x, -M, M)``: NaN passes, and finite values are
    clamped as the SATFINITE cast would clamp them anyway.
    ``NONE`` leaves it to the SATFINITE cast: NaN -> the NaN code.
    """

    MIN_THEN_MAX = "min-then-max"
    MAX_THEN_MIN = "max-then-min"
    TORCH = "torch"
    NONE = "none"


@dataclass(frozen=True)
class ScaleRule:
    """One implementation's rule, every choice named.

    Pipeline per block (float32 throughout): ``amax`` from ``amax_init``;
    ``amax = max(amax, amax_floor)``; ``amax = min(amax, scale_ub)``;
    ``s = amax (scale_from) element_max``; ``s = max(s, min_scale)`` (max and
    min as ``amax_nan`` says); ``pow2``; ``q = x (apply) s``; ``clamp``;
    SATFINITE RNE cast to ``element``, NaN to its canonical (positive) code:
    a NaN that reaches the cast has been through float32 arithmetic, which on
    NVIDIA GPUs yields the canonical positive NaN whatever the operands' signs
    (PTX ISA, floating-point NaN results; not checked on a GPU here). ``None``
    means the step is absent.

    Args:
        name: the fixed rule name.
        source: implementation, file and commit it describes.
        element: element format (catalogue name).
        scale_format: ``float32`` or ``e8m0fnu`` (bytes).
        granularity: what one scale covers.
        block: elements per block along a row (``BLOCK`` only).
        amax_nan: NaN in the reduction.
        amax_init: the reduction's start value (0 is the memset / neutral one).
        amax_floor: eps the amax is floored at, or None.
        scale_ub: upper bound on amax before the division, or None.
        scale_from: ``amax / M`` or ``amax * float32(1/M)``.
        min_scale: floor on the scale after the division, or None.
        pow2: power-of-two rounding of the scale.
        apply: ``x / s`` or ``x * float32(1/s)``.
        clamp: the clamp before the cast.
    """

    name: str
    source: str
    element: str
    scale_format: str
    granularity: Granularity
    block: int | None
    amax_nan: AmaxNan
    amax_init: float
    amax_floor: float | None
    scale_ub: float | None
    scale_from: Apply
    min_scale: float | None
    pow2: Pow2
    apply: Apply
    clamp: Clamp

    def __post_init__(self) -> None:
        if (self.granularity is Granularity.BLOCK) != (self.block is not None):
            raise ValueError(f"{self.name}: a block size goes with BLOCK granularity only")
        byte_scale = self.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL)
        if byte_scale != (self.scale_format == "e8m0fnu"):
            raise ValueError(f"{self.name}: e8m0fnu scales go with the OCP_FLOOR/RCEIL rules")


_VLLM = "vLLM csrc/quantization/w8a8/fp8/"
_MIN_SCALE = 1.0 / (448.0 * 512.0)  # min_scaling_factor<fp8> = 1/(MAX*512), utils.cuh

_DECLARED = (
    ScaleRule(
        "vllm-per-tensor",
        _VLLM + "common.cu dynamic_scaled_fp8_quant (096d3dc9) + common.cuh "
        "scaled_fp8_conversion<true> (0f5257e2): scale memset 0, fmaxf row max / 448, "
        "x * (1/s), fmaxf(-M, fminf(x, M))",
        "e4m3fn",
        "float32",
        Granularity.TENSOR,
        None,
        AmaxNan.SKIP,
        0.0,
        None,
        None,
        Apply.DIVIDE,
        None,
        Pow2.NONE,
        Apply.RECIPROCAL,
        Clamp.MIN_THEN_MAX,
    ),
    ScaleRule(
        "vllm-per-token",
        _VLLM + "common.cu dynamic_per_token_scaled_fp8_quant (096d3dc9): fminf(amax, ub) "
        "/ 448, fmaxf(s, 1/(448*512)), x / s (scaled_fp8_conversion<false>)",
        "e4m3fn",
        "float32",
        Granularity.ROW,
        None,
        AmaxNan.SKIP,
        0.0,
        None,
        None,
        Apply.DIVIDE,
        _MIN_SCALE,
        Pow2.NONE,
        Apply.DIVIDE,
        Clamp.MIN_THEN_MAX,
    ),
    ScaleRule(
        "vllm-native-per-token",
        "vLLM model_executor/layers/quantization/input_quant_fp8.py QuantFP8.forward_native "
        "(014af6b5): x.abs().max(-1), (x_max / 448).clamp(min=1/(448*512)), "
        "x * scale.reciprocal(), .clamp(-448, 448).to(fp8); NaN propagates through the torch "
        "ops",
        "e4m3fn",
        "float32",
        Granularity.ROW,
        None,
        AmaxNan.PROPAGATE,
        0.0,
        None,
        None,
        Apply.DIVIDE,
        _MIN_SCALE,
        Pow2.NONE,
        Apply.RECIPROCAL,
        Clamp.TORCH,
    ),
    ScaleRule(
        "vllm-per-group",
        _VLLM + "per_token_group_quant.cu (0f5257e2): absmax from eps=1e-10 by fmaxf, /448, "
        "x / y_s, fminf(fmaxf(x, -M), M)",
        "e4m3fn",
        "float32",
        Granularity.BLOCK,
        128,
        AmaxNan.SKIP,
        0.0,
        1e-10,
        None,
        Apply.DIVIDE,
        None,
        Pow2.NONE,
        Apply.DIVIDE,
        Clamp.MAX_THEN_MIN,
    ),
    ScaleRule(
        "vllm-per-group-ue8m0",
        _VLLM + "per_token_group_quant.cu (0f5257e2), SCALE_UE8M0: y_s rounded up to a power "
        "of two from its exponent bits (the register kernel's form)",
        "e4m3fn",
        "float32",
        Granularity.BLOCK,
        128,
        AmaxNan.SKIP,
        0.0,
        1e-10,
        None,
        Apply.DIVIDE,
        None,
        Pow2.CEIL_BITS,
        Apply.DIVIDE,
        Clamp.MAX_THEN_MIN,
    ),
    ScaleRule(
        "ocp-floor",
        "OCP MX v1.0 §6.3 FLOOR; torchao prototype/mx_formats/mx_tensor.py to_mx FLOOR "
        "(050515e8): torch.amax, exponent bits - emax_elem clamped to [-127, 128], "
        "non-finite -> 0xFF, x * 2**(127 - byte), SATFINITE cast",
        "e4m3fn",
        "e8m0fnu",
        Granularity.BLOCK,
        32,
        AmaxNan.PROPAGATE,
        0.0,
        None,
        None,
        Apply.DIVIDE,
        None,
        Pow2.OCP_FLOOR,
        Apply.RECIPROCAL,
        Clamp.NONE,
    ),
    ScaleRule(
        "rceil",
        "torchao prototype/mx_formats/mx_tensor.py _to_mx_rceil + _f32_to_e8m0_rceil "
        "(050515e8): amax * float32(1/max_elem) rounded up to e8m0, non-finite -> 0xFF; "
        "cuDNN BlockScaling quantize_round_up(amax / vmax)",
        "e4m3fn",
        "e8m0fnu",
        Granularity.BLOCK,
        32,
        AmaxNan.PROPAGATE,
        0.0,
        None,
        None,
        Apply.RECIPROCAL,
        None,
        Pow2.RCEIL,
        Apply.RECIPROCAL,
        Clamp.NONE,
    ),
)

RULES: MappingProxyType[str, ScaleRule] = MappingProxyType({r.name: r for r in _DECLARED})


def get_rule(rule: str | ScaleRule) -> ScaleRule:
    """Look a rule up by name, or pass a :class:`ScaleRule` through.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(rule, ScaleRule):
        return rule
    try:
        return RULES[rule]
    except (KeyError, TypeError):
        raise ValueError(f"unknown scale rule {rule!r}; known: {', '.join(RULES)}") from None
