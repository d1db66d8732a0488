"""Values the argument parsers show before any work: choices, defaults, help.

They live in heavy modules (numpy, numba, the gates); keeping a copy here lets
``fp8lab SUBCOMMAND --help`` build its parser without importing those.
``tests/meta/test_cli_lazy.py`` holds each copy equal to its home.
"""

from __future__ import annotations

__all__ = [
    "ALL_PATTERNS",
    "BUILTIN_ENCODERS",
    "BUNDLE_GATES",
    "K_MULTIPLE",
    "KERNEL_ERROR_EXIT",
    "PROOF_PLANS",
]

ALL_PATTERNS = 1 << 32  # fp8lab.exhaustive.ALL_PATTERNS
BUILTIN_ENCODERS = ("fast", "fast-numpy", "array", "scan", "f32tofp8", "ml_dtypes")
KERNEL_ERROR_EXIT = 4  # fp8lab.exhaustive.KERNEL_ERROR_EXIT
PROOF_PLANS = ("default", "mx")  # fp8lab.proofs.PLANS
K_MULTIPLE = 16  # fp8lab.gemm.protocol.K_MULTIPLE
BUNDLE_GATES = ("G1", "G3")  # fp8lab.bundle.BUNDLE_GATES
