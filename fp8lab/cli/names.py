"""Values the argument parsers show before any work: choices, defaults, help.

They live in heavy modules (numpy, numba, the gates); keeping a copy here lets
``fp8lab SUBCOMMAND --help`` build its parser without importing those.
``tests/integration/test_cli_lazy.py`` holds each copy equal to its home.
"""

from __future__ import annotations

from fp8lab.locations import notebooks_dir

__all__ = [
    "ALL_PATTERNS",
    "BRUTE_ENGINES",
    "BUILTIN_ENCODERS",
    "BUILTIN_PAIR_KERNELS",
    "BUNDLE_GATES",
    "DEFAULT_NOTEBOOK_TIMEOUT",
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

ALL_PATTERNS = 1 << 32  # fp8lab.exhaustive.ALL_PATTERNS
BUILTIN_ENCODERS = ("fast", "fast-numpy", "array", "scan", "f32tofp8", "ml_dtypes")
KERNEL_ERROR_EXIT = 4  # fp8lab.exhaustive.KERNEL_ERROR_EXIT
PROOF_PLANS = ("default", "mx")  # fp8lab.proofs.PLANS
K_MULTIPLE = 16  # fp8lab.gemm.protocol.K_MULTIPLE
BUNDLE_GATES = ("G1", "G3", "GQ")  # fp8lab.bundle.BUNDLE_GATES
ORDER_METHODS = ("recursive", "basic")  # fp8lab.gemm.order.METHODS
DEFAULT_NOTEBOOK_TIMEOUT = 1800.0  # fp8lab.evidence.notebooks.DEFAULT_TIMEOUT
NOTEBOOKS_DIR = notebooks_dir()  # fp8lab.evidence.notebooks
BRUTE_ENGINES = ("auto", "fused", "numpy")  # fp8lab.detect.BRUTE_ENGINES
BUILTIN_PAIR_KERNELS = ("reciprocal", "divide")  # fp8lab.detect.BUILTIN_PAIR_KERNELS
KERNEL_ERROR = "kernel-error"  # fp8lab.exhaustive.KERNEL_ERROR
GATE_NAMES = ("G1", "G2", "G2h", "G3", "GF", "GQ")  # fp8lab.gates.GATES
GF_CHAINS = ("rmsnorm", "rmsnorm-gated", "silu-mul")  # fp8lab.gates.GF_CHAINS
GQ_SCHEMES = ("per-tensor", "per-token", "per-group", "mxfp8", "nvfp4")  # fp8lab.gates.GQ_RULES
NAN_POLICIES = ("vllm-cpp", "keep-sign", "clamp-pos", "clamp-neg")  # fp8lab.kernels
