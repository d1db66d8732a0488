"""The axes of a scale rule: each an enumeration of the named choices a rule makes.

A :class:`fp8lab.specs.scale_rules.ScaleRule` takes one value of each; the
exact reference and the port both read them.
"""

from __future__ import annotations

import enum

__all__ = [
    "AmaxNan",
    "Apply",
    "Clamp",
    "Granularity",
    "NanCode",
    "Pow2",
    "Quotient",
    "SignedZero",
    "Storage",
    "ElementRounding",
    "Arithmetic",
    "E8m0Zero",
    "E8m0Inf",
    "E8m0NanBlock",
    "E8m0Exponent",
    "ScaleSource",
    "E8m0Nan",
]


class Granularity(enum.Enum):
    """What one scale covers: the tensor, a row (token), or ``block`` elements of a row."""

    TENSOR = "tensor"
    ROW = "row"
    BLOCK = "block"


class AmaxNan(enum.Enum):
    """NaN in the scale-side max/min (amax reduction, eps floor, ``scale_ub``, ``min_scale``).

    ``SKIP`` is C ``fmaxf``/``fminf`` (CUDA kernels); ``PROPAGATE`` is
    ``torch.amax`` / ``Tensor.max`` / ``torch.clamp``, where NaN wins. A
    NaN-skipping reduction gives the same amax however its elements are split
    into lanes and the lanes combined (``fmaxf`` drops each NaN where it meets
    it), so a vectorised ``fmaxf`` reduction is ``SKIP``; the lane-wise form
    that differs is a rule's ``amax_lanes``.
    """

    SKIP = "skip"
    PROPAGATE = "propagate"


class Apply(enum.Enum):
    """How a quotient is formed: ``a / b``, or ``a * (1 / b)`` with the reciprocal rounded first.

    ``MULTIPLY`` is the element step of a multiplier scale (``x * s``), and only that.
    """

    DIVIDE = "divide"
    RECIPROCAL = "reciprocal"
    MULTIPLY = "multiply"


class Quotient(enum.Enum):
    """The precision of the scale formula: the amax floor, its bound and the quotient.

    ``FLOAT32`` rounds each step to float32. ``FLOAT64`` computes them in
    float64 and rounds the scale to float32 once (torchao's ``amax_to_scale``).
    """

    FLOAT32 = "float32"
    FLOAT64 = "float64"


class Storage(enum.Enum):
    """What the stored scale is: a divisor (``amax / M``; ``x / s``) or a multiplier (``M / amax``).

    With ``MULTIPLIER`` the formula is ``M (scale_from) amax`` and the elements
    are ``x * s`` (``apply = "multiply"``): torchao's float8 training scale.
    """

    DIVISOR = "divisor"
    MULTIPLIER = "multiplier"


class NanCode(enum.Enum):
    """Which NaN code is right where the element is NaN.

    ``CANONICAL``: the format's positive NaN code (a GPU's float32 arithmetic
    makes positive NaNs). ``ANY``: every NaN code of the format is the same NaN
    (a CPU's arithmetic makes NaNs of either sign; torchao's own bitwise tests
    compare NaN codes as equal).
    """

    CANONICAL = "canonical"
    ANY = "any"


class SignedZero(enum.Enum):
    """What becomes of a -0 quotient before the clamp and the cast.

    ``KEEP``: it stays -0, the code 0x80. ``PLUS_ZERO``: the quotient has a
    +0 zero point added (``x / s + 0``), which turns -0, and only -0, into +0
    (compressed-tensors' ``scaled += zero_point`` on its symmetric zero point).
    """

    KEEP = "keep"
    PLUS_ZERO = "plus-zero"


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


class ElementRounding(enum.Enum):
    """How a quotient between two element values is rounded by the cast.

    ``RNE``: to nearest, a tie to the even code (``cvt.rn``, ``torch``'s
    ``.to(float8_*)``, ml_dtypes). ``TIES_AWAY``: to nearest, a tie to the
    value of larger magnitude (``round`` half away from zero, as software
    emulations that round with ``floor(|x| + 0.5)`` do). Either saturates.
    """

    RNE = "rne"
    TIES_AWAY = "ties-away"


class Arithmetic(enum.Enum):
    """The dtype the scale and the element quotient are computed in.

    ``FLOAT32``: float32 whatever the input (a kernel that widens its input
    first). ``INPUT``: the input's own dtype, as torch computes ``amax / 448``
    and ``x / scale`` on a bfloat16 tensor: on bfloat16 input the scale and
    each quotient are rounded to bfloat16 (float32 input is unchanged), and
    a zero scale becomes ``input_zero_scale`` (compressed-tensors:
    ``torch.finfo(bfloat16).eps``, 2^-7). ``INPUT_QUOTIENT``: the scale stays
    float32 and only each quotient is rounded to the input's dtype, as torch
    divides a bfloat16 tensor by a 0-dim float32 tensor or a Python float:
    the quotient in float32 (``opmath``), the scale unrounded, the result
    bfloat16 (torch 2.13 CPU, checked by ``tests/gates/test_gq_new_axis_values.py``).
    """

    FLOAT32 = "float32"
    INPUT = "input"
    INPUT_QUOTIENT = "input-quotient"


class E8m0Zero(enum.Enum):
    """What an e8m0 scale byte of 0 does to its block's elements.

    ``OCP``: byte 0 is 2^-127, so the elements are multiplied by 2^127.
    ``MIN_NORMAL``: the byte's float32 divisor (its bits, 0.0) is raised to
    float32's least normal 2^-126 and the elements divided by it (torchao
    FLOOR). ``ONE``: the elements are multiplied by 1 (torchao RCEIL).
    """

    OCP = "ocp"
    MIN_NORMAL = "min-normal"
    ONE = "one"


class E8m0Inf(enum.Enum):
    """The e8m0 scale byte of a block whose amax is infinite.

    ``NAN_BYTE``: 0xFF, the NaN scale (the block's elements follow
    ``e8m0_nan_block``). ``MAX_BYTE``: 0xFE, 2^127 (torchao RCEIL).
    ``EXPONENT_BITS``: the amax's exponent field read as 2^128 like any
    other, less the element's emax and clamped (0xF7 for e4m3; torchao FLOOR;
    an OCP_FLOOR rule only).
    """

    NAN_BYTE = "nan-byte"
    MAX_BYTE = "max-byte"
    EXPONENT_BITS = "exponent-bits"


class E8m0Nan(enum.Enum):
    """The e8m0 scale byte of a block whose amax (or RCEIL quotient) is NaN.

    ``NAN_BYTE``: 0xFF, the NaN scale (OCP MX v1.0). ``ZERO_BYTE``: 0x00, as a
    kernel that rounds the quotient up by adding ``0x7FFFFF`` to its bits and
    masking the exponent field makes of a NaN (``0x7FC00000 + 0x7FFFFF`` carries
    out of the field); the block's elements then follow ``e8m0_zero``.
    """

    NAN_BYTE = "nan-byte"
    ZERO_BYTE = "zero-byte"


class E8m0NanBlock(enum.Enum):
    """The elements of a block whose e8m0 scale byte is 0xFF (NaN).

    ``ALL_NAN``: every element is NaN. ``FINITE_TO_ZERO``: the elements are
    divided by the byte's float32 bits, +inf: a finite element becomes a zero
    of its sign, and an inf or NaN element NaN (torchao FLOOR).
    """

    ALL_NAN = "all-nan"
    FINITE_TO_ZERO = "finite-to-zero"


class E8m0Exponent(enum.Enum):
    """How an e8m0 rule finds its power of two.

    ``BITS``: exactly, from the float32 bits (RCEIL: the quotient's, up unless
    the mantissa is 0; OCP FLOOR: the amax's exponent field).
    ``LOG2_FLOAT32``: through ``log2`` rounded to float32 first (to nearest):
    RCEIL ``ceil(log2(s))``, so a scale just above ``2**k`` whose ``log2`` rounds
    to ``k`` gets ``2**k`` (torchao RCEIL's eager ``torch.ceil(torch.log2(descale))``);
    OCP FLOOR ``floor(log2(amax))``, so an amax just below ``2**(k+1)`` whose
    ``log2`` rounds up gets ``k + 1`` (a ``floorf(log2f(amax))`` kernel).
    """

    BITS = "bits"
    LOG2_FLOAT32 = "log2-float32"


class ScaleSource(enum.Enum):
    """Where the scale comes from.

    ``AMAX``: computed from the block's amax by the rule's formula (dynamic
    quantization: the kernel returns it, GQ checks it). ``GIVEN``: handed to
    the kernel with ``x`` (static quantization: G1); the amax keys then hold
    their neutral values (no floor, bound, minimum or power of two).
    """

    AMAX = "amax"
    GIVEN = "given"
