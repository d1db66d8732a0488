"""Mutants of the scale-rule port (target ``scheme``, gated by GQ): the scale rules' bug classes.

Each mutant is :mod:`fp8lab.kernels.scheme` with one bug written into its
source (:class:`.patch.SourcePatch`), gated by GQ under the scheme and rule
of the port it mutates. Those come from :data:`SCHEME_MUTANTS` (the
harness's data), never from the kernel. Before a mutant is judged, the
unmutated port must pass GQ under the same scheme and rule (:func:`restored`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fp8lab.gates import GateResult, run_gq
from fp8lab.kernels import scheme as port
from fp8lab.mutants.patch import SourcePatch

__all__ = [
    "MUTANT_AXES",
    "PORT_MODULE",
    "WITHOUT_MUTANT",
    "SCHEME_BUILDERS",
    "NVFP4_MUTANTS",
    "SCHEME_MUTANTS",
    "SchemeMutant",
    "SchemeSubject",
    "gq_runner",
    "restored",
    "scheme_subjects",
]

PORT_MODULE = "fp8lab.kernels.scheme"


@dataclass(frozen=True)
class SchemeSubject:
    """A GQ kernel (``FUNC(x)``, nvfp4 ``FUNC(x, global_amax)``) and its scheme and rule."""

    name: str
    scheme: str
    rule: str
    func: Callable[..., Any]


@dataclass(frozen=True)
class SchemeMutant:
    """The port's source edits and the (scheme, rule) pairs the mutant is gated under."""

    gated_as: tuple[tuple[str, str], ...]
    edits: tuple[tuple[str, str], ...]

    def patch(self) -> SourcePatch:
        """The edits as a patch of the port module."""
        return SourcePatch(PORT_MODULE, self.edits)


_MIN_SCALE = """    if rule.min_scale is not None:
        big = np.fmax if rule.amax_nan is AmaxNan.SKIP else np.maximum
        s = big(s, _F32(rule.min_scale))
"""
_NAN_BYTE = "    bits = np.where(rb == 255, np.uint32(0x7F80_0001), bits)\n"
_SCALE = "    s = _scale(wide, rule, top)\n"
_PROPAGATE = "    if rule.amax_nan is AmaxNan.SKIP:\n"

_NV_AMAX = "        amax = np.fmax.reduce(np.abs(blocks), axis=1, initial=_F32(0))\n"
_NV_BYTE = '    return encode(np.asarray(s, _F32), "e4m3fn", saturate=True, nan="canonical")\n'
_NV_INV = (
    "        return np.asarray(np.fmin(_F32(1.0) / (dec_b * s_dec), np.finfo(_F32).max), _F32)\n"
)
_NV_RCP6 = "        rcp6 = _F32(1.0) / _F32(6.0)\n"
_NV_NAN = "    nan = np.isnan(q)\n"
_E2M1_MIDS = "[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]"
_COMPRESSED_TENSORS = (
    ("per-tensor", "compressed-tensors-0.20-tensor"),
    ("per-token", "compressed-tensors-0.20-token"),
    ("per-group", "compressed-tensors-0.20-group-128"),
)
_DIVIDE = (("nvfp4", "te-nvfp4-divide"),)
_RECIPROCAL = (("nvfp4", "te-nvfp4-reciprocal"),)
_FUSED = (("nvfp4", "te-nvfp4-fused"),)
_TORCHAO = (("nvfp4", "torchao-0.18-nvfp4"),)

# NVFP4 (TE's kernels, fp8lab.specs.nvfp4_rules): each a patch of nvfp4_block_scales or
# nvfp4_quant, gated under one rule.
NVFP4_MUTANTS: dict[str, SchemeMutant] = {
    # e4m3 block byte truncated (float32 mantissa cut to 3 bits) instead of RNE: one step low.
    "nvfp4_scale_truncated": SchemeMutant(
        _FUSED,
        (
            (
                _NV_BYTE,
                "    s = (np.asarray(s, _F32).view(np.uint32) & np.uint32(0xFFF0_0000))"
                ".view(_F32)\n" + _NV_BYTE,
            ),
        ),
    ),
    # The block formula multiplies by S_dec = 1 / S_enc where S_enc belongs.
    "nvfp4_s_enc_s_dec_swapped": SchemeMutant(
        _DIVIDE, ((_NV_RCP6, "        s_enc = _F32(1.0) / s_enc\n" + _NV_RCP6),)
    ),
    # The block amax stops one element short: 15 of 16 reduced.
    "nvfp4_block_off_by_one": SchemeMutant(
        _RECIPROCAL, ((_NV_AMAX, _NV_AMAX.replace("np.abs(blocks)", "np.abs(blocks[:, :-1])")),)
    ),
    # The block amax over 32 elements (MXFP8's block), one byte per 16 all the same.
    "nvfp4_block_32": SchemeMutant(
        _DIVIDE,
        (
            (
                _NV_AMAX,
                "        amax = np.repeat(np.fmax.reduce(np.abs(x32.reshape(-1, 32)), axis=1, "
                "initial=_F32(0)), 2)\n",
            ),
        ),
    ),
    # e2m1 ties rounded away from zero (microxcaling's default) instead of to even.
    "nvfp4_e2m1_ties_away": SchemeMutant(
        _FUSED,
        (
            (
                _NV_NAN,
                f"    q = np.where(np.isin(np.abs(q), {_E2M1_MIDS}), np.nextafter(q, 2 * q), q)\n"
                + _NV_NAN,
            ),
        ),
    ),
    # NaN propagated into the block amax (torch.amax) where TE's fmaxf skips it.
    "nvfp4_amax_propagates_nan": SchemeMutant(
        _DIVIDE, ((_NV_AMAX, _NV_AMAX.replace("np.fmax.reduce", "np.maximum.reduce")),)
    ),
    # The element multiplier without fminf(., FLT_MAX): a zero block gets 1/0 = inf, 0*inf = NaN.
    "nvfp4_inverse_unclamped": SchemeMutant(
        _DIVIDE, ((_NV_INV, "        return np.asarray(_F32(1.0) / (dec_b * s_dec), _F32)\n"),)
    ),
    # TE's other block formula: amax * fl(1/6) * S_enc where amax / 6 * S_enc is declared.
    "nvfp4_reciprocal_for_divide": SchemeMutant(
        _DIVIDE,
        (("            s = amax / _F32(6.0) * s_enc\n", "            s = amax * rcp6 * s_enc\n"),),
    ),
    # amax * (S_enc * fl(1/6)) where amax * fl(1/6) * S_enc is declared (equal at S_enc = 1).
    "nvfp4_fused_for_reciprocal": SchemeMutant(
        _RECIPROCAL,
        (("            s = amax * rcp6 * s_enc\n", "            s = amax * (s_enc * rcp6)\n"),),
    ),
    # torchao's choices (torchao-0.18-nvfp4), each flipped alone.
    # The block value multiplied by S_enc = fl(1 / S) where torchao divides by S.
    "nvfp4_divisor_multiplied": SchemeMutant(
        _TORCHAO,
        (
            (
                "            s = amax / _F32(6.0) / s_dec\n",
                "            s = amax / _F32(6.0) * s_enc\n",
            ),
        ),
    ),
    # TE's encode scale fminf(2688 / g, FLT_MAX) where torchao's divisor g / 2688 is declared.
    "nvfp4_encode_for_divisor": SchemeMutant(
        _TORCHAO,
        (
            (
                "        if rule.tensor_scale is Nvfp4TensorScale.DIVISOR:\n",
                "        if rule.tensor_scale is not Nvfp4TensorScale.DIVISOR:\n",
            ),
        ),
    ),
    # The block-scale floor at e4m3's smallest subnormal 2**-9, not its smallest normal 2**-6.
    "nvfp4_floor_subnormal": SchemeMutant(
        _TORCHAO, (("_F32(rule.block_bounds[0])", "_F32(2.0**-9)"),)
    ),
    # The element multiplier 1 / (d * S) where torchao forms (1 / S) / d.
    "nvfp4_multiplier_product": SchemeMutant(
        _TORCHAO,
        (
            (
                "            return np.asarray(s_enc / dec_b, _F32)\n",
                "            return np.asarray(_F32(1.0) / (dec_b * s_dec), _F32)\n",
            ),
        ),
    ),
    # NaN skipped in the block amax (fmaxf) where torchao's torch.amax lets it win.
    "nvfp4_amax_skips_nan": SchemeMutant(
        _TORCHAO,
        (
            (
                "        if spec.amax_nan is AmaxNan.PROPAGATE:  # torch.amax: a NaN wins\n",
                "        if spec.amax_nan is not AmaxNan.PROPAGATE:  # torch.amax: a NaN wins\n",
            ),
        ),
    ),
    # A NaN product coded +6 (the PTX cast's 0x7) where torchao's bitwise cast of the float32
    # NaN is declared, and a NaN block byte the scale side makes left 0x7F (not 0xFF).
    "nvfp4_nan_maxnorm": SchemeMutant(
        _TORCHAO,
        (
            (
                "    if rule.nan_code is Nvfp4NanCode.TORCH_BITS:\n        made = ",
                "    if False:  # the scale side's NaN byte unsigned whatever the rule says\n"
                "        made = ",
            ),
            (
                "    if spec.nan_code is Nvfp4NanCode.TORCH_BITS:\n        codes[nan]",
                "    if False:  # NaN products +6 whatever the rule says\n        codes[nan]",
            ),
        ),
    ),
}

SCHEME_MUTANTS: dict[str, SchemeMutant] = {
    # vLLM per-token without min_scaling_factor: a zero row gives s = 0 and 0/0 = NaN.
    "min_scale_missing": SchemeMutant((("per-token", "vllm-per-token"),), ((_MIN_SCALE, ""),)),
    # torch.float8_e4m3fnuz (ROCm; max 240, bias 8, NaN 0x80) where e4m3fn is declared.
    "e4m3fnuz_for_e4m3fn": SchemeMutant(
        (("per-token", "vllm-per-token"),),
        (("    elem = get_format(spec.element)\n", '    elem = get_format("e4m3fnuz")\n'),),
    ),
    # triton PR #11624's class: e8m0 byte 0 read as 0, not 2**-127 (so 1/scale = +inf).
    "e8m0_zero_byte_as_zero": SchemeMutant(
        (("mxfp8", "rceil"),),
        (
            (
                _NAN_BYTE,
                _NAN_BYTE + "    bits = np.where(byte == 0, np.uint32(0x7F80_0000), bits)\n",
            ),
        ),
    ),
    # e8m0 byte 255 read as +inf, not NaN (so 1/scale = +0).
    "e8m0_nan_byte_as_inf": SchemeMutant(
        (("mxfp8", "rceil"),),
        ((_NAN_BYTE, "    bits = np.where(rb == 255, np.uint32(0), bits)\n"),),
    ),
    # UE8M0 scale rounded down: the exponent bits kept, the round-up dropped.
    "ue8m0_one_step_low": SchemeMutant(
        (("per-group", "vllm-per-group-ue8m0"),),
        (
            (
                "up = ((bits >> 23) & 0xFF) + ((bits & 0x7F_FFFF) != 0)",
                "up = (bits >> 23) & 0xFF",
            ),
        ),
    ),
    # fmaxf's NaN-skipping reduction where torch.amax propagates (torch and torchao rules).
    "amax_skips_nan": SchemeMutant(
        (("per-token", "vllm-native-per-token"), ("mxfp8", "rceil")),
        ((_PROPAGATE, "    if True:  # fmaxf whatever the rule says\n"),),
    ),
    # The amax loop stops one element short of its block (group or row): block - 1 reduced.
    "block_off_by_one": SchemeMutant(
        (("per-group", "vllm-per-group"), ("per-token", "vllm-per-token")),
        (("    a = np.abs(blocks)\n", "    a = np.abs(blocks[:, :-1])\n"),),
    ),
    # fminf(fmaxf(x, -M), M) where fmaxf(-M, fminf(x, M)) is declared: NaN -> -448, not +448.
    "clamp_order_swapped": SchemeMutant(
        (("per-tensor", "vllm-per-tensor"),),
        (
            (
                "            q = np.fmax(-top, np.fmin(q, top))\n",
                "            q = np.fmin(np.fmax(q, -top), top)\n",
            ),
        ),
    ),
    # amax / 448 stored to bfloat16 and widened back before use.
    "scale_via_bf16": SchemeMutant(
        (("per-group", "vllm-per-group"),),
        ((_SCALE, _SCALE + "    s = s.astype(bfloat16_dtype()).astype(_F32)\n"),),
    ),
    # compressed-tensors' zero point dropped: a -0 quotient stays -0 (0x80) where it gives +0.
    "signed_zero_kept": SchemeMutant(
        _COMPRESSED_TENSORS,
        (
            (
                "                q = q + _F32(0)  # the symmetric zero point\n",
                "                pass\n",
            ),
        ),
    ),
    # A zero scale kept (0 / 0 = NaN) where compressed-tensors replaces it by float32 eps.
    "zero_scale_missing": SchemeMutant(
        _COMPRESSED_TENSORS,
        (
            (
                "        s = np.where(s == 0, _F32(rule.zero_scale), s)\n",
                "        pass\n",
            ),
            (
                "        s = np.where(s == 0, _F32(rule.input_zero_scale), s)"
                "  # bfloat16's own eps\n",
                "        pass\n",
            ),
        ),
    ),
    # amax / 448 stored where torchao's float8 scale is the multiplier 448 / amax.
    "divisor_for_multiplier": SchemeMutant(
        (
            ("per-tensor", "torchao-0.18-float8-tensorwise"),
            ("per-token", "torchao-0.18-float8-rowwise"),
        ),
        (
            (
                "    num, den = (m, amax) if rule.storage is Storage.MULTIPLIER else (amax, m)\n",
                "    num, den = (amax, m)\n",
            ),
        ),
    ),
    # Ties between element values rounded away from zero where the cast's RNE is declared.
    "element_ties_away": SchemeMutant(
        (("per-token", "vllm-per-token"),),
        (
            (
                "        if spec.element_rounding is ElementRounding.TIES_AWAY:\n",
                "        if True:  # ties away whatever the rule says\n",
            ),
        ),
    ),
    # Scale and quotient kept in float32 on bfloat16 input where the input's dtype is declared.
    "arithmetic_float32_for_input": SchemeMutant(
        (("per-token", "compressed-tensors-0.20-token"),),
        (
            (
                "    narrow = spec.arithmetic is Arithmetic.INPUT and is_bfloat16(arr.dtype)\n",
                "    narrow = False  # float32 arithmetic whatever the rule says\n",
            ),
            (
                "    narrow_q = spec.arithmetic is not Arithmetic.FLOAT32"
                " and is_bfloat16(arr.dtype)\n",
                "    narrow_q = False\n",
            ),
        ),
    ),
    # An e8m0 byte of 0 multiplying by 2**127 where torchao FLOOR's 2**-126 divisor is declared.
    "e8m0_zero_as_ocp": SchemeMutant(
        (("mxfp8", "torchao-0.18-mxfp8-floor"),),
        (
            (
                "            if spec.e8m0_zero is E8m0Zero.MIN_NORMAL:\n",
                "            if False:  # byte 0 as OCP's 2**127 whatever the rule says\n",
            ),
        ),
    ),
    # An infinite amax given the NaN byte where its exponent bits (0xF7) are declared.
    "e8m0_inf_as_nan": SchemeMutant(
        (("mxfp8", "torchao-0.18-mxfp8-floor"), ("mxfp8", "torchao-0.18-mxfp8-rceil")),
        (
            (
                "    if rule.e8m0_inf is E8m0Inf.EXPONENT_BITS:  # field 255 read like any other\n",
                "    if False:  # an inf amax is the NaN byte whatever the rule says\n",
            ),
            (
                "    if rule.e8m0_inf is E8m0Inf.MAX_BYTE:\n",
                "    if False:  # likewise\n",
            ),
        ),
    ),
    # A NaN block made all NaN where its finite elements are declared to become zeros.
    "e8m0_nan_block_all_nan": SchemeMutant(
        (("mxfp8", "torchao-0.18-mxfp8-floor"),),
        (
            (
                "            if spec.e8m0_nan_block is E8m0NanBlock.FINITE_TO_ZERO:\n",
                "            if False:  # a NaN block all NaN whatever the rule says\n",
            ),
        ),
    ),
    # The e8m0 byte from the exponent bits where torchao RCEIL's float32 ceil(log2(d)) is
    # declared: a d just above 2**k whose log2 rounds down to k gets 2**(k+1), one byte high.
    "e8m0_exponent_bits_for_log2": SchemeMutant(
        (("mxfp8", "torchao-0.18-mxfp8-rceil"),),
        (
            (
                "        if rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32:"
                "  # torch.ceil(torch.log2(d))\n",
                "        if False:  # the exponent bits whatever the rule says\n",
            ),
        ),
    ),
    # A NaN element coded with its sign (as a CPU's arithmetic leaves it; the rule's
    # nan_code = "any") where the format's positive NaN code is declared. Only rules whose
    # NaN reaches the cast (no fminf/fmaxf clamp) can tell: the OCP MX ones.
    "nan_code_sign_kept": SchemeMutant(
        (("mxfp8", "ocp-floor"), ("mxfp8", "rceil")),
        (
            (
                "    codes = encode(np.asarray(q, _F32).reshape(m, k), elem, "
                'saturate=spec.saturate, nan="canonical")\n',
                "    codes = encode(np.asarray(q, _F32).reshape(m, k), elem, "
                'saturate=spec.saturate, nan="keep-sign")\n',
            ),
        ),
    ),
    # The scale rounded to bfloat16 as well, where only the quotient is in the input's dtype
    # (torch's bfloat16 tensor over a 0-dim float32 scale).
    "arithmetic_input_for_quotient": SchemeMutant(
        (("per-tensor", "vllm-per-tensor[arithmetic=input-quotient]"),),
        (
            (
                "    narrow = spec.arithmetic is Arithmetic.INPUT and is_bfloat16(arr.dtype)\n",
                "    narrow = spec.arithmetic is not Arithmetic.FLOAT32"
                " and is_bfloat16(arr.dtype)\n",
            ),
        ),
    ),
    # A NaN amax given the NaN byte 0xFF where the bit-add round-up's byte 0x00 is declared.
    "e8m0_nan_as_nan_byte": SchemeMutant(
        (("mxfp8", "rceil[e8m0_nan=zero-byte]"),),
        (
            (
                "    nan_byte = 0 if rule.e8m0_nan is E8m0Nan.ZERO_BYTE else 255\n",
                "    nan_byte = 255  # the NaN byte whatever the rule says\n",
            ),
        ),
    ),
    # One sequential fmaxf over the block where lanes that keep NaN, combined by fmaxf, are
    # declared: the amax survives a NaN in its own lane.
    "amax_lanes_ignored": SchemeMutant(
        (("per-group", "vllm-per-group[amax_lanes=8]"),),
        (
            (
                "    if rule.amax_lanes is not None:"
                "  # a vector max per lane (NaN kept), lanes by fmaxf\n",
                "    if False:  # one scalar fmaxf whatever the rule says\n",
            ),
        ),
    ),
    **NVFP4_MUTANTS,
}


# mutant -> the rule fields (axes) whose reading it breaks; a mutant not listed breaks no
# choice of the rule (a decode, a cast or a formula slip). Every field of both rule kinds
# has a mutant here or a reason in WITHOUT_MUTANT (tests/specs/test_rule_axes_read.py).
MUTANT_AXES: dict[str, tuple[str, ...]] = {
    "nvfp4_block_off_by_one": ("block",),
    "nvfp4_block_32": ("block",),
    "nvfp4_amax_propagates_nan": ("amax_nan",),
    "nvfp4_inverse_unclamped": ("inverse",),
    "nvfp4_reciprocal_for_divide": ("order",),
    "nvfp4_fused_for_reciprocal": ("order",),
    "nvfp4_divisor_multiplied": ("order",),
    "nvfp4_encode_for_divisor": ("tensor_scale",),
    "nvfp4_floor_subnormal": ("block_bounds",),
    "nvfp4_multiplier_product": ("inverse",),
    "nvfp4_amax_skips_nan": ("amax_nan",),
    "nvfp4_nan_maxnorm": ("nan_code",),
    "min_scale_missing": ("min_scale",),
    "e4m3fnuz_for_e4m3fn": ("element",),
    "ue8m0_one_step_low": ("pow2",),
    "amax_skips_nan": ("amax_nan",),
    "block_off_by_one": ("block",),
    "clamp_order_swapped": ("clamp",),
    "signed_zero_kept": ("signed_zero",),
    "zero_scale_missing": ("zero_scale", "input_zero_scale"),
    "divisor_for_multiplier": ("storage",),
    "element_ties_away": ("element_rounding",),
    "arithmetic_float32_for_input": ("arithmetic",),
    "e8m0_zero_as_ocp": ("e8m0_zero",),
    "e8m0_inf_as_nan": ("e8m0_inf",),
    "e8m0_nan_block_all_nan": ("e8m0_nan_block",),
    "e8m0_exponent_bits_for_log2": ("e8m0_exponent",),
    "nan_code_sign_kept": ("nan_code",),
    "arithmetic_input_for_quotient": ("arithmetic",),
    "e8m0_nan_as_nan_byte": ("e8m0_nan",),
    "amax_lanes_ignored": ("amax_lanes",),
}
# (rule kind, field) -> why no catalogue mutant breaks it
WITHOUT_MUTANT: dict[tuple[str, str], str] = {
    ("scale", "scale_format"): "tied to pow2: a rule refuses any other value",
    ("scale", "quotient"): "float64 and float32 agree on one division (fp8lab.sweeps.quotient)",
    ("scale", "granularity"): "no catalogue mutant yet",
    ("scale", "amax_init"): "no catalogue mutant yet",
    ("scale", "amax_floor"): "no catalogue mutant yet",
    ("scale", "scale_ub"): "no catalogue mutant yet (no named rule bounds its amax)",
    ("scale", "scale_from"): "no catalogue mutant yet",
    ("scale", "apply"): "no catalogue mutant yet",
    ("scale", "saturate"): "no scheme mutant yet (the OCP rules' elements reach 511 and "
    "saturate); the static cast's saturation is broken by the seed's M3",
    ("scale", "scale_source"): "who forms the scale (G1 or the kernel), not arithmetic",
    ("nvfp4", "clamp_block"): "only a NaN block value tells, and TE's fmaxf amax makes none",
}


def _quant(module: Any, scheme: str, rule: str) -> Callable[..., Any]:
    """The port's kernel of ``scheme``: ``nvfp4_quant(x, global_amax)`` or ``scheme_quant(x)``."""
    return partial(module.nvfp4_quant if scheme == "nvfp4" else module.scheme_quant, rule=rule)


def scheme_subjects(name: str, mutant: SchemeMutant) -> list[SchemeSubject]:
    """Compile ``mutant``'s patched port; one subject per (scheme, rule) it is gated under.

    Raises:
        Exception: a stale edit or a port that does not compile (INCOMPETENT).
    """
    module = mutant.patch().load(f"fp8lab_scheme_mutant_{name}")
    return [
        SchemeSubject(name, scheme, rule, _quant(module, scheme, rule))
        for scheme, rule in mutant.gated_as
    ]


def restored(name: str) -> list[SchemeSubject]:
    """The unmutated port under the (scheme, rule) pairs of mutant ``name``."""
    return [
        SchemeSubject(f"{rule} port", scheme, rule, _quant(port, scheme, rule))
        for scheme, rule in SCHEME_MUTANTS[name].gated_as
    ]


def gq_runner(subject: SchemeSubject, *, special_words: bool = True) -> GateResult:
    """GQ on ``subject`` under its scheme and rule, at GQ's defaults (``special_words`` is G1's)."""
    return run_gq(subject.func, scheme=subject.scheme, rule=subject.rule, kernel_name=subject.name)


SCHEME_BUILDERS: dict[str, Callable[[], list[SchemeSubject]]] = {
    name: partial(scheme_subjects, name, mutant) for name, mutant in SCHEME_MUTANTS.items()
}
