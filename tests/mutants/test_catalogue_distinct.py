"""Each catalogue mutant is its own defect: no two mutants of one kernel are equivalent.

Quant mutants are compared on G1's populations at every G1 scale (the shard
case included, handed its shard scales) and on a seeded sample of 2^24
float32 patterns at s = 1 and at s = 0.77; GEMM mutants on G3's cases and
seeded random products. A mutant that raises has the signature "raises".
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from fp8lab.gates.g1 import G1_SCALES, G1_SHARD_SCALES
from fp8lab.gates.g3 import g3_cases
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.mutants.catalogue import CATALOGUE
from fp8lab.mutants.gemm_mutants import GEMM_BUILDERS, builtin_gemm_kernel
from fp8lab.mutants.quant_mutants import QUANT_BUILDERS, clamp_after_round, nan_keeps_sign
from fp8lab.populations import g1_population
from fp8lab.populations.gemm import g3_operands

SAMPLE_SEED = 424242


def _quant_inputs() -> list[tuple[np.ndarray, Any]]:
    rng = np.random.default_rng(SAMPLE_SEED)
    anywhere = rng.integers(0, 1 << 32, 1 << 23, dtype=np.uint32)
    band = rng.integers(0x3980_0000, 0x4480_0000, 1 << 23, dtype=np.uint32)
    band |= rng.integers(0, 2, band.size, dtype=np.uint32) << np.uint32(31)
    sample = np.concatenate([anywhere, band]).view(np.float32)
    inputs: list[tuple[np.ndarray, Any]] = [(sample, 1.0), (sample, 0.77)]
    for s in G1_SCALES:
        inputs.append((g1_population(s).words, s))
    top = float(max(np.float32(v) for v in G1_SHARD_SCALES))
    inputs.append((g1_population(top).words, np.array(G1_SHARD_SCALES, np.float32)))
    return inputs


def _signature(run: Any, inputs: list[tuple[Any, ...]]) -> str:
    digest = hashlib.sha256()
    with np.errstate(all="ignore"):
        for args in inputs:
            try:
                out = run(*args)
            except Exception as exc:  # noqa: BLE001 - raising is a behaviour too
                digest.update(f"raises {type(exc).__name__}".encode())
                continue
            digest.update(np.ascontiguousarray(out).tobytes())
    return digest.hexdigest()


def _collisions(signatures: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for name, sig in signatures.items():
        groups[sig].append(name)
    return [names for names in groups.values() if len(names) > 1]


def test_the_sample_is_at_least_2_to_the_24_inputs() -> None:
    assert _quant_inputs()[0][0].size >= 1 << 24


@pytest.mark.slow
def test_no_two_quant_mutants_are_equivalent() -> None:
    inputs = _quant_inputs()
    kernels = {m.id: QUANT_BUILDERS[m.build]() for m in CATALOGUE if m.target == "quant"}
    kernels["restored"] = BUILTIN_KERNELS["vllm_cpp"]
    signatures = {k: _signature(kern.quantize, inputs) for k, kern in kernels.items()}
    assert len(signatures) == 18
    assert _collisions(signatures) == []


def test_no_two_gemm_mutants_are_equivalent() -> None:
    inputs: list[tuple[Any, ...]] = []
    for case in g3_cases():
        a, b = g3_operands(case)
        inputs.append((a, b, np.float32(case.s_in), np.float32(case.s_w), case.out))
    rng = np.random.default_rng(SAMPLE_SEED)
    for i in range(16):
        m, n, k = (
            int(rng.integers(1, 9)),
            16 * int(rng.integers(1, 4)),
            16 * int(rng.integers(1, 9)),
        )
        a = rng.integers(0, 256, (m, k), dtype=np.uint8)
        b = rng.integers(0, 256, (n, k), dtype=np.uint8)
        s_in, s_w = np.float32(2.0 ** rng.uniform(-8, 4)), np.float32(2.0 ** rng.uniform(-8, 4))
        inputs.append((a, b, s_in, s_w, ("f32", "bf16")[i % 2]))
    kernels = {m.id: GEMM_BUILDERS[m.build]() for m in CATALOGUE if m.target == "gemm"}
    kernels["restored"] = builtin_gemm_kernel()
    signatures = {k: _signature(kern.matmul, inputs) for k, kern in kernels.items()}
    assert len(signatures) == 7
    assert _collisions(signatures) == []


def test_clamp_after_round_differs_from_nan_keeps_sign_where_it_says() -> None:
    """K11 is not K03: negative overflow and -inf become +448; -NaN is 0x7E, not 0xFF."""
    y = np.array([-600.0, -np.inf, -np.nan, np.nan, 460.0, -447.0], np.float32)
    assert clamp_after_round(y).tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE]
    assert nan_keeps_sign(y).tolist() == [0xFE, 0xFE, 0xFF, 0x7F, 0x7E, 0xFE]
