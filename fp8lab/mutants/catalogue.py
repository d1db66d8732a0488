"""The mutant catalogue, as data: one record per mutant (known bug classes).

``build`` names the builder in :mod:`.quant_mutants` (target ``quant``, gated
by G1), :mod:`.gemm_mutants` (target ``gemm``, gated by G3),
:mod:`.scheme_mutants` (target ``scheme``, gated by GQ) or
:mod:`.chain_mutants` (target ``chain``, gated by GF).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUE", "SEED_NOTES", "SEED_TABLE", "MutantSpec"]

SEED = "seed PR #842"
KNOWN = "known bug class"


@dataclass(frozen=True)
class MutantSpec:
    """One catalogue mutant."""

    id: str
    description: str
    bug_class: str
    origin: str
    target: str
    build: str


CATALOGUE: tuple[MutantSpec, ...] = (
    MutantSpec("M0", "kernel missing or unregistered", "registration", SEED, "quant", "M0"),
    MutantSpec("M1", "input scale ignored", "scaling", SEED, "quant", "M1"),
    MutantSpec("M2", "divide instead of reciprocal-multiply", "scaling", SEED, "quant", "M2"),
    MutantSpec(
        "M3", "saturation removed at both points of F32ToFp8", "overflow", SEED, "quant", "M3"
    ),
    MutantSpec("M4", "truncation instead of RNE", "rounding", SEED, "quant", "M4"),
    MutantSpec(
        "K01", "round half away from zero", "rounding", KNOWN, "quant", "half_away_from_zero"
    ),
    MutantSpec("K02", "ties to odd", "rounding", KNOWN, "quant", "ties_to_odd"),
    MutantSpec("K03", "NaN sign kept (vllm.cpp drops it)", "nan", KNOWN, "quant", "nan_keeps_sign"),
    MutantSpec("K04", "NaN -> 0x7E on the vllm.cpp kernel", "nan", KNOWN, "quant", "nan_to_max"),
    MutantSpec("K05", "-0 becomes +0", "signed zero", KNOWN, "quant", "negative_zero_dropped"),
    MutantSpec(
        "K06", "subnormals flushed to zero", "subnormal", KNOWN, "quant", "subnormals_flushed"
    ),
    MutantSpec(
        "K07", "double rounding through float16", "double rounding", KNOWN, "quant", "via_float16"
    ),
    MutantSpec(
        "K08", "double rounding through bfloat16", "double rounding", KNOWN, "quant", "via_bfloat16"
    ),
    MutantSpec("K09", "exponent bias off by one", "encoding", KNOWN, "quant", "bias_off_by_one"),
    MutantSpec(
        "K10",
        "overflow to NaN instead of saturation",
        "overflow",
        KNOWN,
        "quant",
        "overflow_to_nan",
    ),
    MutantSpec(
        "K11",
        "clamp applied after rounding instead of before",
        "overflow",
        KNOWN,
        "quant",
        "clamp_after_round",
    ),
    MutantSpec(
        "K12",
        "per-shard scales collapsed with min instead of max",
        "scaling",
        KNOWN,
        "quant",
        "shards_min",
    ),
    MutantSpec("M5a", "GEMM ignores alpha", "epilogue", SEED, "gemm", "ignores_alpha"),
    MutantSpec(
        "M5b",
        "caller folds the weight scale only",
        "epilogue",
        SEED,
        "gemm",
        "folds_weight_scale_only",
    ),
    MutantSpec("K13", "alpha = s_in / s_w", "epilogue", KNOWN, "gemm", "alpha_divides"),
    MutantSpec("K14", "bf16 accumulator", "accumulation", KNOWN, "gemm", "accumulates_in_bf16"),
    MutantSpec("K15", "B not transposed", "layout", KNOWN, "gemm", "transposes_b"),
    MutantSpec("K16", "0x7F decoded as 480", "decoding", KNOWN, "gemm", "decodes_nan_as_480"),
    MutantSpec(
        "Q01",
        "min-scale floor missing (per-token)",
        "scaling",
        KNOWN,
        "scheme",
        "min_scale_missing",
    ),
    MutantSpec(
        "Q02",
        "e4m3fnuz where e4m3fn is declared",
        "encoding",
        KNOWN,
        "scheme",
        "e4m3fnuz_for_e4m3fn",
    ),
    MutantSpec(
        "Q03", "e8m0 byte 0 decoded as 0", "decoding", KNOWN, "scheme", "e8m0_zero_byte_as_zero"
    ),
    MutantSpec(
        "Q04", "e8m0 byte 255 decoded as inf", "decoding", KNOWN, "scheme", "e8m0_nan_byte_as_inf"
    ),
    MutantSpec(
        "Q05", "UE8M0 scale one power of two low", "scaling", KNOWN, "scheme", "ue8m0_one_step_low"
    ),
    MutantSpec(
        "Q06", "NaN skipped in a propagating amax", "nan", KNOWN, "scheme", "amax_skips_nan"
    ),
    MutantSpec(
        "Q07", "amax reduction one element short", "blocking", KNOWN, "scheme", "block_off_by_one"
    ),
    MutantSpec("Q08", "clamp order swapped", "nan", KNOWN, "scheme", "clamp_order_swapped"),
    MutantSpec(
        "Q09",
        "scale double-rounded through bf16",
        "double rounding",
        KNOWN,
        "scheme",
        "scale_via_bf16",
    ),
    MutantSpec(
        "Q10",
        "-0 kept where a zero point makes it +0",
        "signed zero",
        KNOWN,
        "scheme",
        "signed_zero_kept",
    ),
    MutantSpec(
        "Q11", "zero scale not replaced", "zero scale", KNOWN, "scheme", "zero_scale_missing"
    ),
    MutantSpec(
        "Q12",
        "divisor stored for a multiplier scale",
        "scale storage",
        KNOWN,
        "scheme",
        "divisor_for_multiplier",
    ),
    MutantSpec(
        "Q13", "e8m0 byte 0 as 2**127, not 2**-126", "decoding", KNOWN, "scheme", "e8m0_zero_as_ocp"
    ),
    MutantSpec("Q14", "inf amax as the NaN e8m0 byte", "nan", KNOWN, "scheme", "e8m0_inf_as_nan"),
    MutantSpec(
        "Q15",
        "NaN e8m0 block all NaN, finite elements not zeroed",
        "decoding",
        KNOWN,
        "scheme",
        "e8m0_nan_block_all_nan",
    ),
    MutantSpec(
        "Q20",
        "element ties rounded away from zero, not to even",
        "rounding",
        KNOWN,
        "scheme",
        "element_ties_away",
    ),
    MutantSpec(
        "Q21",
        "float32 arithmetic where the input's bfloat16 is declared",
        "double rounding",
        KNOWN,
        "scheme",
        "arithmetic_float32_for_input",
    ),
    MutantSpec(
        "Q22",
        "e8m0 byte from the exponent bits where float32 ceil(log2) is declared",
        "scaling",
        KNOWN,
        "scheme",
        "e8m0_exponent_bits_for_log2",
    ),
    MutantSpec(
        "Q23",
        "a NaN element's sign kept where the positive NaN code is declared",
        "nan",
        KNOWN,
        "scheme",
        "nan_code_sign_kept",
    ),
    MutantSpec(
        "Q24",
        "bfloat16 scale where a float32 scale and a bfloat16 quotient are declared",
        "double rounding",
        KNOWN,
        "scheme",
        "arithmetic_input_for_quotient",
    ),
    MutantSpec(
        "Q25",
        "NaN amax as the NaN e8m0 byte where byte 0x00 is declared",
        "nan",
        KNOWN,
        "scheme",
        "e8m0_nan_as_nan_byte",
    ),
    MutantSpec(
        "Q26",
        "scalar fmaxf amax where a lane-wise vector amax is declared",
        "nan",
        KNOWN,
        "scheme",
        "amax_lanes_ignored",
    ),
    MutantSpec(
        "N01",
        "nvfp4 e4m3 block scale truncated, not RNE",
        "rounding",
        KNOWN,
        "scheme",
        "nvfp4_scale_truncated",
    ),
    MutantSpec(
        "N02",
        "nvfp4 S_dec where S_enc belongs",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_s_enc_s_dec_swapped",
    ),
    MutantSpec(
        "N03",
        "nvfp4 block amax one element short",
        "blocking",
        KNOWN,
        "scheme",
        "nvfp4_block_off_by_one",
    ),
    MutantSpec("N04", "nvfp4 block amax over 32", "blocking", KNOWN, "scheme", "nvfp4_block_32"),
    MutantSpec(
        "N05", "nvfp4 e2m1 ties away from zero", "rounding", KNOWN, "scheme", "nvfp4_e2m1_ties_away"
    ),
    MutantSpec(
        "N06",
        "nvfp4 NaN propagated into the block amax",
        "nan",
        KNOWN,
        "scheme",
        "nvfp4_amax_propagates_nan",
    ),
    MutantSpec(
        "N07",
        "nvfp4 element multiplier without the FLT_MAX clamp",
        "overflow",
        KNOWN,
        "scheme",
        "nvfp4_inverse_unclamped",
    ),
    MutantSpec(
        "N08",
        "nvfp4 reciprocal block formula for divide",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_reciprocal_for_divide",
    ),
    MutantSpec(
        "N09",
        "nvfp4 fused block formula for reciprocal",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_fused_for_reciprocal",
    ),
    MutantSpec(
        "N10",
        "nvfp4 divisor tensor scale multiplied as 1/S",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_divisor_multiplied",
    ),
    MutantSpec(
        "N11",
        "nvfp4 encode tensor scale for a divisor one",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_encode_for_divisor",
    ),
    MutantSpec(
        "N12",
        "nvfp4 block-scale floor at 2**-9, not 2**-6",
        "clamp",
        KNOWN,
        "scheme",
        "nvfp4_floor_subnormal",
    ),
    MutantSpec(
        "N13",
        "nvfp4 element multiplier 1/(d*S) for (1/S)/d",
        "scaling",
        KNOWN,
        "scheme",
        "nvfp4_multiplier_product",
    ),
    MutantSpec(
        "N14",
        "nvfp4 NaN skipped where the amax lets it win",
        "nan",
        KNOWN,
        "scheme",
        "nvfp4_amax_skips_nan",
    ),
    MutantSpec(
        "N15",
        "nvfp4 NaN products +6 where torchao's NaN bits are declared",
        "nan",
        KNOWN,
        "scheme",
        "nvfp4_nan_maxnorm",
    ),
    MutantSpec(
        "C01", "bf16 rounding point moved", "rounding point", KNOWN, "chain", "rounding_point_moved"
    ),
    MutantSpec("C02", "eps outside the sqrt", "norm", KNOWN, "chain", "eps_outside_sqrt"),
    MutantSpec(
        "C03", "variance over bf16 values", "rounding point", KNOWN, "chain", "variance_over_bf16"
    ),
    MutantSpec("C04", "gate before the norm", "ordering", KNOWN, "chain", "gate_before_norm"),
    MutantSpec(
        "C05", "__expf structure where expf is declared", "exp", KNOWN, "chain", "fast_exp_for_expf"
    ),
    MutantSpec(
        "C06",
        "pairwise sum where sequential is declared",
        "reduction order",
        KNOWN,
        "chain",
        "reduction_order_pairwise",
    ),
)

# The seed's mutation table (vllm.cpp PR #842): failed / run assertions of its C++ suite.
SEED_TABLE = {
    "M0": (5, 6),
    "M1": (24, 56),
    "M2": (6, 56),
    "M3": (28, 56),
    "M4": (28, 56),
    "M5a": (3, 56),
    "M5b": (3, 56),
}

# Why fp8lab's counts differ from the seed's. G1 here asserts once per case (scale x input
# dtype, the shard case included) and word class: 16 cases x 6 classes = 96 assertions,
# where the C++ suite had 56 assertions over 4 test cases for all of G1, G2 and G3.
SEED_NOTES = {
    "M0": "The seed removed the registrations, so the C++ runner ran only the 6 assertions that "
    "did not need them (5 failed). fp8lab calls the kernel in every case; a missing kernel "
    "raises in all 16 cases, so every assertion fails and the case count does not shrink.",
    "M1": "Ignoring the scale is a no-op at s = 1.0 in both suites; fp8lab also fails the "
    "bfloat16 cases and counts per word class, so more assertions fail.",
    "M2": "Divide exposes only tie and ladder words at 0.0092, 0.13 and 0.77 with float32 "
    "input (184 words); fp8lab fails the tie class at 3 scales and the ladder class at 0.0092 "
    "(4 assertions), the seed 2 assertions per scale (6). fp8lab's shard case (s = 0.9) adds "
    "the random and tie classes with both input dtypes: 8 in all.",
    "M3": "Both saturation points removed; fp8lab's per-class assertions fail at every scale, "
    "and the special words (+-inf) fail too.",
    "M4": "Truncation moves random, tie and ladder words at every scale; counted per class.",
    "M5a": "G3 fails both verdicts (bitwise and tolerance) in every case with alpha != 1; the "
    "seed's fourth case has s_in = s_w = 1, where ignoring alpha is a no-op in both suites.",
    "M5b": "As M5a: both verdicts fail in every case where s_in != 1.",
}
