"""The named recipes, each transcribed from the implementation it names.

Sources (read, not run; the line anchors are in docs/gates/gf.md):

* vLLM CUDA ``fused_add_rms_norm_static_fp8_quant`` and ``rms_norm_static_fp8_quant``
  (``csrc/layernorm_quant_kernels.cu``): ``scalar_t z = input; z += residual``
  (c10 bf16 ``+``: a float32 sum stored to bf16), variance over ``(float)z``,
  ``rsqrtf(variance / hidden + eps)``, ``((scalar_t)(x * s)) * weight``
  (bf16 x bf16, stored to bf16), ``scaled_fp8_conversion<true>(out, 1/scale)``
  whose ``fmaxf/fminf`` clamp sends NaN to 448 = 0x7E.
* vLLM native ``RMSNorm.forward_static`` + ``QuantFP8`` static (the norm as
  ``vllm/ir/ops/layernorm.py`` ``rms_norm``; the residual sum per
  not checked here): ``x.float() + residual``
  kept in float32, ``x * rsqrt(var + eps)``, ``.to(bf16) * weight``, then
  ``x * scale.reciprocal()`` cast to e4m3fn (torch keeps NaN: 0x7F).
* vllm.cpp standalone sequence (``mudler/vllm.cpp`` d85906ae, ``src/vt/cpu/cpu_ops.cpp``
  ``RmsNormKernel``, ``RmsNormGatedKernel``, ``MoeSiluMulKernel``, ``Silu``;
  ``include/vt/recipes.h`` ``kRmsNormQuantFp8`` (gemma), ``kRmsNormGatedQuantFp8``,
  ``kSiluMulQuantFp8``): float32 sum stored to bf16 and re-read,
  ``1.0f / std::sqrt(sumsq / h + eps)``, ``v * inv * w`` in float32 stored to bf16,
  then ``QuantFp8Static`` (NaN -> 0x7F).
* vLLM CUDA ``silu_and_mul_quant`` (``csrc/quantization/activation_kernels.cu``,
  ``(T)(x / (1 + expf(-x)))``, ``* y`` in bf16, then
  the static fp8 conversion.

Device ``rsqrtf`` and ``expf`` are not correctly rounded (CUDA C Programming
Guide, maximum ulp errors 2 and 2); these recipes model them as correctly
rounded and say so in their ``source``: a device run owes the measurement.
"""

from __future__ import annotations

from fp8lab.specs.chain_recipe import Chain, Step

__all__ = ["RECIPES", "STANDALONE", "recipe_names", "standalone_for"]

_F32 = ("f32",)
_F32_BF16 = ("f32", "bf16")
_CUDA_CR = "device rsqrtf/expf modelled as correctly rounded (not measured)"


def _tail(nan_code: int, source: str) -> Step:
    return Step("quant", ("bf16",), "e4m3fn", _F32, nan_code=nan_code, source=source)


def _rms_head(add_rounds: tuple[str, ...], src: str) -> tuple[Step, ...]:
    return (
        Step("add_residual", ("bf16", "bf16"), add_rounds[-1], add_rounds, source=src),
        Step("square_reduce", ("f32",), "f32", _F32, order="sequential", source=src),
        Step("mean_eps", ("f32",), "f32", _F32, source=src),
    )


def _vllm_cuda_rms() -> Chain:
    src = "vLLM csrc/layernorm_quant_kernels.cu fused_add_rms_norm_static_fp8_quant"
    steps = (
        *_rms_head(_F32_BF16, src),
        Step("rsqrt", ("f32",), "f32", _F32, variant="cr", source=f"rsqrtf; {_CUDA_CR}"),
        Step("normalize", ("bf16", "f32"), "bf16", _F32_BF16, source=src),
        Step("weight", ("bf16", "bf16"), "bf16", _F32_BF16, source=src),
        _tail(0x7E, "vLLM common.cuh scaled_fp8_conversion<true>: fmaxf/fminf clamp"),
    )
    return Chain("vllm-cuda-fused-add-rmsnorm-static-fp8", "rmsnorm", steps, src)


def _vllm_native_rms(f32_weight: bool) -> Chain:
    src = "vLLM layernorm.py RMSNorm.forward_static + QuantFP8 static"
    weight_in = ("f32", "bf16") if f32_weight else ("bf16", "bf16")
    steps = (
        *_rms_head(_F32, src),
        Step("rsqrt", ("f32",), "f32", _F32, variant="cr", source=f"torch.rsqrt; {_CUDA_CR}"),
        Step(
            "normalize",
            ("f32", "f32"),
            "f32" if f32_weight else "bf16",
            _F32 if f32_weight else _F32_BF16,
            source=src,
        ),
        Step("weight", weight_in, "bf16", _F32_BF16, source=src),
        _tail(0x7F, "torch x * scale.reciprocal() -> float8_e4m3fn keeps NaN (0x7F)"),
    )
    if f32_weight:
        name = "vllm-native-rmsnorm-f32-weight-fp8"
        src = "vLLM after 225936a (issue #49616): x * rsqrt * weight in float32, then bf16"
    else:
        name = "vllm-native-rmsnorm-fp8"
    return Chain(name, "rmsnorm", steps, src)


def _vllm_cpp_rms(gemma: bool) -> Chain:
    src = "vllm.cpp cpu_ops.cpp RmsNormKernel + QuantFp8Static (recipes.h kRmsNormQuantFp8)"
    steps = (
        *_rms_head(_F32_BF16, src),
        Step("rsqrt", ("f32",), "f32", _F32, variant="div-sqrt", source="1.0f / std::sqrt"),
        Step("normalize", ("bf16", "f32"), "f32", _F32, source=src),
        Step("weight", ("f32", "bf16"), "bf16", _F32_BF16, gemma=gemma, source=src),
        _tail(0x7F, "vllm.cpp F32ToFp8: NaN -> 0x7F"),
    )
    name = "vllm-cpp-standalone-gemma-rmsnorm-fp8" if gemma else "vllm-cpp-standalone-rmsnorm-fp8"
    return Chain(name, "rmsnorm", steps, src)


def _vllm_cpp_gated() -> Chain:
    src = "vllm.cpp cpu_ops.cpp RmsNormGatedKernel + QuantFp8Static (kRmsNormGatedQuantFp8)"
    steps = (
        Step("square_reduce", ("bf16",), "f32", _F32, order="sequential", source=src),
        Step("mean_eps", ("f32",), "f32", _F32, source=src),
        Step("rsqrt", ("f32",), "f32", _F32, variant="div-sqrt", source="1.0f / std::sqrt"),
        Step("normalize", ("bf16", "f32"), "f32", _F32, source=src),
        Step("weight", ("f32", "bf16"), "f32", _F32, source=src),
        Step(
            "gate_silu",
            ("f32", "bf16"),
            "bf16",
            _F32_BF16,
            variant="cr",
            source="Silu(z) = z / (1.0f + std::exp(-z)); glibc expf modelled as correctly rounded",
        ),
        _tail(0x7F, "vllm.cpp F32ToFp8: NaN -> 0x7F"),
    )
    return Chain("vllm-cpp-standalone-rmsnorm-gated-fp8", "rmsnorm-gated", steps, src)


def _silu(
    name: str,
    silu_rounds: tuple[str, ...],
    exp: str,
    nan: int,
    src: str,
    mul_rounds: tuple[str, ...] = _F32_BF16,
) -> Chain:
    steps = (
        Step("silu", ("bf16",), silu_rounds[-1], silu_rounds, variant=exp, source=src),
        Step("mul_up", (silu_rounds[-1], "bf16"), mul_rounds[-1], mul_rounds, source=src),
        _tail(nan, src),
    )
    return Chain(name, "silu-mul", steps, src)


RECIPES: dict[str, Chain] = {
    c.name: c
    for c in (
        _vllm_cuda_rms(),
        _vllm_native_rms(False),
        _vllm_native_rms(True),
        _vllm_cpp_rms(False),
        _vllm_cpp_rms(True),
        _vllm_cpp_gated(),
        _silu(
            "vllm-cuda-silu-and-mul-quant-fp8",
            _F32_BF16,
            "cr",
            0x7E,
            f"vLLM activation_kernels.cu silu_and_mul_quant; {_CUDA_CR}",
        ),
        _silu(
            "vllm-cpp-standalone-silu-mul-fp8",
            _F32,
            "cr",
            0x7F,
            "vllm.cpp cpu_ops.cpp MoeSiluMulKernel + QuantFp8Static (kSiluMulQuantFp8); "
            "glibc expf modelled as correctly rounded",
        ),
        _silu(
            "fast-exp-silu-mul-fp8",
            _F32,
            "exp2-f32-product",
            0x7E,
            "the __expf structure (ex2 of fl32(x*log2e)) of vLLM "
            "silu_mul_fp8_quant_deep_gemm_kernel (product kept in float32), static "
            "terminal; not bit-exact __expf",
            _F32,
        ),
        _silu(
            "expf-silu-mul-fp8",
            _F32,
            "cr",
            0x7E,
            "fast-exp-silu-mul-fp8 with a correctly rounded expf in place of __expf: the twin "
            "that isolates the exp choice",
            _F32,
        ),
    )
}

# The standalone-sequence recipe GF compares each recipe of a chain against.
STANDALONE = {
    "rmsnorm": "vllm-cpp-standalone-rmsnorm-fp8",
    "rmsnorm-gated": "vllm-cpp-standalone-rmsnorm-gated-fp8",
    "silu-mul": "vllm-cpp-standalone-silu-mul-fp8",
}


def recipe_names(chain: str) -> list[str]:
    """The recipe names of one chain kind, in catalogue order."""
    return [n for n, c in RECIPES.items() if c.chain == chain]


def standalone_for(recipe: str) -> str:
    """The vllm.cpp standalone-sequence recipe that ``recipe`` is compared with.

    A Gemma-weighted rmsnorm recipe is compared with the Gemma standalone one.
    """
    chain = RECIPES[recipe]
    if chain.chain == "rmsnorm" and chain.gemma():
        return "vllm-cpp-standalone-gemma-rmsnorm-fp8"
    return STANDALONE[chain.chain]
