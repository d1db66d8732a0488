"""The gates, one record each: what a gate's kernel computes, how it is called, what it holds.

Everything that treats gates differently reads a :class:`Gate` here: the
command line (``fp8lab gates``, ``fp8lab export``), the kernel's child
process, bundles, mutation runs and :mod:`fp8lab.testing`. A gate's code
lives in its own module; the record names it by ``"module:attribute"``
strings that :func:`load` imports when the gate runs, so this module loads no
numpy (``fp8lab gates --help`` reads it). Adding a gate is one module and one
:func:`register` (docs/layout.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GATES",
    "KERNEL_KINDS",
    "OPTIONS",
    "Gate",
    "bundle_gates",
    "gate",
    "gates_taking",
    "load",
    "register",
]

# What a gate's kernel computes, one word each: the kernel loaders' kinds and the mutants' targets.
KERNEL_KINDS = ("quant", "gemm", "scheme", "chain")
# The fields of fp8lab.specs.gate_options.GateOptions a gate can take.
OPTIONS = ("nan_policy", "shard_scales", "large", "gemm", "chains", "schemes", "static_rule")


@dataclass(frozen=True)
class Gate:
    """One gate: its kernel's kind and calling convention, and where its parts live.

    Args:
        name: the gate's name on the command line and in records.
        kind: what its kernel computes, one of :data:`KERNEL_KINDS`.
        convention: what the gate calls and wants back, for help and error messages.
        runner: ``"module:function"``, ``runner(kernel, **options) -> GateResult``.
        builtins: ``"module:attribute"`` of fp8lab's own kernels it runs with no
            ``--kernel``: a mapping (each value, or the one :attr:`builtin_key`
            names), or a function of the run's options returning the kernels.
        builtin_key: the run option that names the one built-in kernel of each
            run (its value, or the value's ``name``); empty: all of them.
        options: the :class:`~fp8lab.specs.gate_options.GateOptions` fields it
            takes (:data:`OPTIONS`).
        needs: those of its options a ``--kernel`` or a bundle must state (the
            kernel computes one chain, one scheme); ``--gate all`` leaves the
            gate out when they are not stated.
        bundle: ``"module:attribute"`` of its
            :class:`~fp8lab.bundle.format.BundleFormat`; empty: no bundles.
        mutants: ``"module:function"``, the runner mutation runs gate a mutant
            of :attr:`kind` with (``runner(subject, *, special_words)``); empty:
            no mutation run uses the gate.
        adds: what its record holds beyond the counts every record has.
    """

    name: str
    kind: str
    convention: str
    runner: str
    builtins: str
    builtin_key: str = ""
    options: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    bundle: str = ""
    mutants: str = ""
    adds: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KERNEL_KINDS:
            raise ValueError(f"gate {self.name}: kind {self.kind!r} is not one of {KERNEL_KINDS}")
        unknown = set(self.options) - set(OPTIONS)
        if unknown or not set(self.needs) <= set(self.options):
            raise ValueError(f"gate {self.name}: options {self.options}, needs {self.needs}")


_QUANT = (
    "quantize(x, scale) with x a float32 or bfloat16 array [N] and scale one float32 "
    "scalar, wanting uint8 e4m3fn codes [N] back (a QuantKernel object with name and "
    "quantize, or such a function)"
)

_G1 = (
    "quantize(x, scale) with x a float32 or bfloat16 array [N] and scale one float32 "
    "scalar (under a per-row or per-block static rule: x [M, K] and float32 scales [M] "
    "or [M, K/block]), wanting uint8 codes of x's shape back in the rule's format (or a "
    "float8 array of it) (a QuantKernel object with name and quantize, or such a function)"
)

GATES: dict[str, Gate] = {
    g.name: g
    for g in (
        Gate(
            "G1",
            "quant",
            _G1,
            "fp8lab.gates.g1:run_g1",
            "fp8lab.kernels.static_rule:g1_builtins",
            options=("nan_policy", "shard_scales", "static_rule"),
            bundle="fp8lab.bundle.replay:G1_BUNDLE",
            mutants="fp8lab.mutants.quant_mutants:g1_runner",
            adds="the static rule; nan_policy with its source and what the kernel declared; "
            "mismatches by word class; the first offenders; measured.explained_by, the "
            "neighbouring rule a FAIL's outputs follow",
        ),
        Gate(
            "G2",
            "quant",
            _QUANT,
            "fp8lab.gates.g2:run_g2",
            "fp8lab.gates.cuda_compare:builtin_kernels",
            adds="scope; measured: the device's compute capability and the NaN codes it chose",
        ),
        Gate(
            "G2h",
            "quant",
            _QUANT,
            "fp8lab.gates.g2h:run_g2h",
            "fp8lab.gates.cuda_compare:builtin_kernels",
            adds="scope; measured: the NaN codes the host build chose",
        ),
        Gate(
            "G3",
            "gemm",
            "matmul(a_codes, b_codes, s_in, s_w, out_dtype) -> [M,N] float32 or bfloat16 "
            "(a MatmulKernel object with name, matmul and optional spec, or such a function, "
            "checked against vllm.cpp's model)",
            "fp8lab.gates.g3:run_g3",
            "fp8lab.kernels.matmul:BUILTIN_MATMUL_KERNELS",
            options=("large", "gemm"),
            bundle="fp8lab.bundle.replay:G3_BUNDLE",
            mutants="fp8lab.mutants.gemm_mutants:g3_runner",
            adds="the first offenders at their output positions",
        ),
        Gate(
            "GF",
            "chain",
            "a function with the --chain signature (docs/gates/gf.md), optionally with a "
            "trace method for the prefix checks",
            "fp8lab.gates.gf:run_gf",
            "fp8lab.kernels.chain:PORTS",
            builtin_key="recipe",
            options=("chains",),
            needs=("chains",),
            mutants="fp8lab.mutants.chain_mutants:gf_runner",
            adds="measured: chain, recipe, the first failing step, the prefix steps checked "
            "and the bytes where the recipe differs from the standalone sequence",
        ),
        Gate(
            "GQ",
            "scheme",
            "FUNC(x) -> (codes, scales), for nvfp4 FUNC(x, global_scale), or PATH.so:SYMBOL "
            "with fp8lab_scheme_quant's signature (fp8lab_nvfp4_quant's for nvfp4) "
            "(docs/gates/gq.md)",
            "fp8lab.gates.gq:run_gq",
            "fp8lab.kernels.scheme:SCHEME_PORTS",
            builtin_key="rule",
            options=("schemes",),
            needs=("schemes",),
            bundle="fp8lab.bundle.gq:GQ_BUNDLE",
            mutants="fp8lab.mutants.scheme_mutants:gq_runner",
            adds="scheme and rule",
        ),
    )
}


def gate(name: str) -> Gate:
    """The gate named ``name``.

    Raises:
        KeyError: naming the gates there are.
    """
    if name not in GATES:
        raise KeyError(f"unknown gate {name!r}; one of {', '.join(GATES)}")
    return GATES[name]


def register(new: Gate) -> None:
    """Add ``new`` to :data:`GATES`.

    Raises:
        ValueError: if a gate of that name is there already.
    """
    if new.name in GATES:
        raise ValueError(f"gate {new.name} is registered already")
    GATES[new.name] = new


def gates_taking(option: str) -> list[str]:
    """The names of the gates that take ``option`` (a field of :data:`OPTIONS`)."""
    return [g.name for g in GATES.values() if option in g.options]


def bundle_gates() -> tuple[str, ...]:
    """The names of the gates whose cases a bundle can hold."""
    return tuple(g.name for g in GATES.values() if g.bundle)


def load(ref: str) -> Any:
    """Import ``"module:attribute"`` and return the attribute (a gate's runner, builtins, ...)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)
