"""Values the argument parsers show before any work: choices, defaults, help.

They live in heavy modules (numpy, numba, the gates); keeping a copy here lets
``fp8lab SUBCOMMAND --help`` build its parser without importing those.
``tests/integration/test_cli_lazy.py`` holds each copy equal to its home. The
gates themselves need no copy: their records (:mod:`fp8lab.specs.gates`) load no numpy.
"""

from __future__ import annotations

from fp8lab.runtime.locations import notebooks_dir

__all__ = [
    "ALL_PATTERNS",
    "ANY_NAN",
    "BRUTE_ENGINES",
    "BUILTIN_ENCODERS",
    "BUILTIN_PAIR_KERNELS",
    "CODEC_NAN_POLICIES",
    "DEFAULT_NOTEBOOK_TIMEOUT",
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
BUILTIN_ENCODERS = (
    "fast",
    "fast-numpy",
    "fast-bits",
    "array",
    "scan",
    "f32tofp8",
    "ml_dtypes",
    "onnx-reference",
    "onnxruntime",
)
KERNEL_ERROR_EXIT = 4  # fp8lab.sweeps.exhaustive.KERNEL_ERROR_EXIT
PROOF_PLANS = ("default", "mx")  # fp8lab.evidence.proofs.PLANS
K_MULTIPLE = 16  # fp8lab.kernels.matmul_protocol.K_MULTIPLE
ORDER_METHODS = ("recursive", "basic")  # fp8lab.order.METHODS
DEFAULT_NOTEBOOK_TIMEOUT = 1800.0  # fp8lab.evidence.execute.DEFAULT_TIMEOUT
NOTEBOOKS_DIR = notebooks_dir()  # fp8lab.evidence.execute
BRUTE_ENGINES = ("auto", "fused", "numpy")  # fp8lab.detect.BRUTE_ENGINES
BUILTIN_PAIR_KERNELS = ("reciprocal", "divide")  # fp8lab.detect.BUILTIN_PAIR_KERNELS
KERNEL_ERROR = "kernel-error"  # fp8lab.gates.records.ProofStatus.KERNEL_ERROR
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
ANY_NAN = "any"  # fp8lab.sweeps.encoders.ANY_NAN: every NaN code the same NaN
