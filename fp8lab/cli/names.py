"""Values the argument parsers show before any work: choices, defaults, help.

They live in heavy modules (numpy, numba, the gates); keeping a copy here lets
``fp8lab SUBCOMMAND --help`` build its parser without importing those.
``tests/integration/test_cli_lazy.py`` holds each copy equal to its home.
"""

from __future__ import annotations

from fp8lab.runtime.locations import notebooks_dir

__all__ = [
    "ALL_PATTERNS",
    "BRUTE_ENGINES",
    "BUILTIN_ENCODERS",
    "BUILTIN_PAIR_KERNELS",
    "BUNDLE_GATES",
    "CODEC_NAN_POLICIES",
    "DEFAULT_NOTEBOOK_TIMEOUT",
    "GATE_KERNEL_KINDS",
    "GATE_NAMES",
    "GF_CHAINS",
    "GQ_SCHEMES",
    "K_MULTIPLE",
    "KERNEL_ERROR",
    "KERNEL_ERROR_EXIT",
    "NAN_POLICIES",
    "NOTEBOOKS_DIR",
    "ORDER_METHODS",
    "PROOF_PLANS",
]

ALL_PATTERNS = 1 << 32  # fp8lab.sweeps.exhaustive.ALL_PATTERNS
BUILTIN_ENCODERS = ("fast", "fast-numpy", "fast-bits", "array", "scan", "f32tofp8", "ml_dtypes")
KERNEL_ERROR_EXIT = 4  # fp8lab.sweeps.exhaustive.KERNEL_ERROR_EXIT
PROOF_PLANS = ("default", "mx")  # fp8lab.evidence.proofs.PLANS
K_MULTIPLE = 16  # fp8lab.kernels.matmul_protocol.K_MULTIPLE
BUNDLE_GATES = ("G1", "G3", "GQ")  # fp8lab.bundle.BUNDLE_GATES
ORDER_METHODS = ("recursive", "basic")  # fp8lab.order.METHODS
DEFAULT_NOTEBOOK_TIMEOUT = 1800.0  # fp8lab.evidence.execute.DEFAULT_TIMEOUT
NOTEBOOKS_DIR = notebooks_dir()  # fp8lab.evidence.execute
BRUTE_ENGINES = ("auto", "fused", "numpy")  # fp8lab.detect.BRUTE_ENGINES
BUILTIN_PAIR_KERNELS = ("reciprocal", "divide")  # fp8lab.detect.BUILTIN_PAIR_KERNELS
KERNEL_ERROR = "kernel-error"  # fp8lab.gates.records.ProofStatus.KERNEL_ERROR
GATE_NAMES = ("G1", "G2", "G2h", "G3", "GF", "GQ")  # fp8lab.gates.GATES
# the kind of kernel each gate takes (fp8lab.gates: MATMUL_GATES, CHAIN_GATES, SCHEME_GATES)
GATE_KERNEL_KINDS = {
    "G1": "quant",
    "G2": "quant",
    "G2h": "quant",
    "G3": "matmul",
    "GF": "callable",
    "GQ": "scheme",
}
GF_CHAINS = ("rmsnorm", "rmsnorm-gated", "silu-mul")  # fp8lab.gates.GF_CHAINS
GQ_SCHEMES = ("per-tensor", "per-token", "per-group", "mxfp8", "nvfp4")  # fp8lab.gates.GQ_RULES
NAN_POLICIES = (  # fp8lab.kernels
    "canonical",
    "keep-sign",
    "all-ones",
    "keep-sign-all-ones",
    "clamp-pos",
    "clamp-neg",
)
CODEC_NAN_POLICIES = NAN_POLICIES[:4]  # those that emit a NaN code (fp8lab.specs.nan.NanPolicy)
