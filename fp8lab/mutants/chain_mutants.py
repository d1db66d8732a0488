"""Mutants of the fused-chain ports (target ``chain``, gated by GF): the fused chains' bug classes.

Each mutant is :mod:`fp8lab.kernels.chain` with one bug written into its
source (:class:`.patch.SourcePatch`); the kernel is the patched module's
port of one recipe, gated by GF under that recipe. The chain and recipe come
from :data:`CHAIN_MUTANTS` (the harness's data), never from the kernel. The
patched port keeps its ``trace``, so GF also checks its prefixes. Before a
mutant is judged, the unmutated port must pass GF (:func:`restored`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fp8lab.gates import GateResult, run_gf
from fp8lab.kernels import chain as ports
from fp8lab.mutants.patch import SourcePatch
from fp8lab.specs.chain_catalogue import RECIPES

__all__ = [
    "CHAIN_BUILDERS",
    "CHAIN_MUTANTS",
    "PORTS_MODULE",
    "ChainMutant",
    "ChainSubject",
    "chain_subject",
    "gf_runner",
    "restored",
]

PORTS_MODULE = "fp8lab.kernels.chain"


@dataclass(frozen=True)
class ChainSubject:
    """A GF kernel and the chain and recipe GF checks it under."""

    name: str
    chain: str
    recipe: str
    kernel: Any


@dataclass(frozen=True)
class ChainMutant:
    """The ports' source edits and the recipe whose port the mutant is."""

    recipe: str
    edits: tuple[tuple[str, str], ...]

    def patch(self) -> SourcePatch:
        """The edits as a patch of the ports module."""
        return SourcePatch(PORTS_MODULE, self.edits)


_CPP_SILU = (
    "    # cpu_ops.cpp MoeSiluMulKernel: silu = g / (1 + exp(-g)); StoreF32(out, silu * up)\n"
    "    g, up = _split(x)\n"
)
_GATED_HEAD = '    v = x.astype(F32)\n    t["square_reduce"] = sumsq = sumsq_sequential(v)\n'
_CPP_EPS = (
    '        t["mean_eps"] = m = _mean_eps(sumsq, v.shape[-1], eps)\n'
    '        t["rsqrt"] = inv = (F32(1) / np.sqrt(m)).astype(F32)\n'
    "        wj = w.astype(F32)\n"
)

CHAIN_MUTANTS: dict[str, ChainMutant] = {
    # vLLM CUDA fused add-RMSNorm: the bf16 store moved from x * r to r.
    "rounding_point_moved": ChainMutant(
        "vllm-cuda-fused-add-rmsnorm-static-fp8",
        (
            (
                '    t["rsqrt"] = s = rsqrt_f64(m)\n'
                '    t["normalize"] = n = (z * s[..., None]).astype(BF16).astype(F32)\n',
                '    t["rsqrt"] = s = rsqrt_f64(m).astype(BF16).astype(F32)\n'
                '    t["normalize"] = n = (z * s[..., None]).astype(F32)\n',
            ),
        ),
    ),
    # vllm.cpp RmsNormKernel computing 1 / (sqrt(mean) + eps).
    "eps_outside_sqrt": ChainMutant(
        "vllm-cpp-standalone-rmsnorm-fp8",
        (
            (
                _CPP_EPS,
                _CPP_EPS.replace("v.shape[-1], eps)", "v.shape[-1], 0.0)").replace(
                    "np.sqrt(m))", "(np.sqrt(m) + F32(eps)))"
                ),
            ),
        ),
    ),
    # vLLM native RMSNorm with the float32 residual sum stored to bf16 before the variance.
    "variance_over_bf16": ChainMutant(
        "vllm-native-rmsnorm-fp8",
        (
            (
                '        t["square_reduce"] = var = sumsq_sequential(z)\n',
                '        t["square_reduce"] = var = sumsq_sequential(z.astype(BF16).astype(F32))\n',
            ),
        ),
    ),
    # vllm.cpp RmsNormGatedKernel multiplying by silu(gate) before the norm, not after.
    "gate_before_norm": ChainMutant(
        "vllm-cpp-standalone-rmsnorm-gated-fp8",
        (
            (
                _GATED_HEAD,
                _GATED_HEAD.replace(
                    "v = x.astype(F32)",
                    "v = (x.astype(F32) * _silu_f32(gate.astype(F32))).astype(F32)",
                ),
            ),
            (
                "out = (nw * _silu_f32(gate.astype(F32))).astype(BF16)",
                "out = nw.astype(BF16)",
            ),
        ),
    ),
    # vllm.cpp's silu-mul (declares expf) with __expf's structure: ex2(fl32(-g * log2 e)).
    "fast_exp_for_expf": ChainMutant(
        "vllm-cpp-standalone-silu-mul-fp8",
        (
            (
                _CPP_SILU + '    t["silu"] = a = _silu_f32(g)\n',
                _CPP_SILU + '    with np.errstate(over="ignore"):\n'
                "        arg = ((-g) * F32(1.4426950408889634)).astype(F32)\n"
                "        e = np.exp2(arg.astype(np.float64)).astype(F32)\n"
                '    t["silu"] = a = (g / (F32(1) + e)).astype(F32)\n',
            ),
        ),
    ),
    # numpy's pairwise sum of squares where a sequential float32 order is declared.
    "reduction_order_pairwise": ChainMutant(
        "vllm-cpp-standalone-rmsnorm-fp8",
        (
            (
                "    return np.cumsum((z * z).astype(F32), axis=-1, dtype=F32)[..., -1]\n",
                "    return np.sum((z * z).astype(F32), axis=-1, dtype=F32)\n",
            ),
        ),
    ),
}


def chain_subject(name: str, mutant: ChainMutant) -> ChainSubject:
    """Compile ``mutant``'s patched ports module; its port of the mutant's recipe.

    Raises:
        Exception: a stale edit or a module that does not compile (INCOMPETENT).
    """
    module = mutant.patch().load(f"fp8lab_chain_mutant_{name}")
    kernel = module.PORTS[mutant.recipe]
    return ChainSubject(name, RECIPES[mutant.recipe].chain, mutant.recipe, kernel)


def restored(name: str) -> ChainSubject:
    """The unmutated port of mutant ``name``'s recipe."""
    recipe = CHAIN_MUTANTS[name].recipe
    return ChainSubject(f"{recipe} port", RECIPES[recipe].chain, recipe, ports.PORTS[recipe])


def gf_runner(subject: ChainSubject, *, special_words: bool = True) -> GateResult:
    """GF on ``subject``'s kernel under its chain and recipe, at GF's defaults.

    ``special_words`` is G1's: GF has one population.
    """
    return run_gf(subject.kernel, chain=subject.chain, recipe=subject.recipe)


CHAIN_BUILDERS: dict[str, Callable[[], ChainSubject]] = {
    name: partial(chain_subject, name, mutant) for name, mutant in CHAIN_MUTANTS.items()
}
