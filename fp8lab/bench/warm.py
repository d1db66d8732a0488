"""Compile fp8lab's numba loops into their on-disk cache ahead of the first run that needs them.

numba compiles a ``cache=True`` loop on its first call with new argument types
and keeps the machine code beside the source, in ``__pycache__``. A fresh
checkout has none of it, so its first test run, proof or notebook pays for every
compile, in each process that gets to a loop before the cache holds it (two test
workers or two pool workers may compile the same loop side by side).
``python -m fp8lab.bench.warm`` (``make setup`` runs it once, as it compiles the
byte code) calls each loop through the function that uses it, on a few inputs
of the types fp8lab hands it: every format and NaN policy of the bit codec,
read-only and writable inputs, every amax pair, both forms of the quotient, the
fused detector, the GEMM ports, the compiled amax split of every pair the
ecosystem study compares, and the port's compiled twin. A loop it misses
compiles on first use, as before; the inputs are too few to cost anything, and
no result is kept: warming changes nothing a run computes, only when its
compiles happen.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable

import numpy as np

from fp8lab.runtime.parallel import default_workers, run_tasks

__all__ = ["STEPS", "main", "warm"]


def _codecs() -> None:
    """The bit codec's kernel of every format, overflow and NaN policy; the table lookup."""
    from fp8lab.codecs.api import ENGINES, encode
    from fp8lab.specs.formats import FORMATS
    from fp8lab.specs.nan import NAN_POLICIES

    writable = np.array([0.0, 1.5, -3.0, np.inf], np.float32)
    readonly = writable.copy()
    readonly.setflags(write=False)
    for fmt, saturate, nan in itertools.product(FORMATS, (True, False), NAN_POLICIES):
        if NAN_POLICIES[nan].to_max:
            continue  # a kernel's clamp, not a code the codec emits
        for x, engine in itertools.product((writable, readonly), ENGINES):
            try:
                encode(x[:3], fmt, saturate=saturate, nan=nan, engine=engine)
            except ValueError:
                continue  # a combination the format refuses (no inf, no NaN)


def _sweeps() -> None:
    """Every amax pair's sweep (the serial loop and the threaded one); both quotient forms."""
    from fp8lab.sweeps.amax import _CHUNK, PAIRS, sweep_pair
    from fp8lab.sweeps.quotient import FORMS, quotient_bounds, quotient_splits
    from fp8lab.sweeps.range_run import RangeRun

    one = 0x3F80_0000
    for pair in PAIRS:
        sweep_pair(pair, run=RangeRun(start=one, stop=one + 16))
    sweep_pair(PAIRS[0], run=RangeRun(start=one, stop=one + 2 * _CHUNK))
    for form in FORMS:
        quotient_splits(quotient_bounds()[0], form, one, one + 16)


def _detect() -> None:
    """The fused divide-against-reciprocal loop, for each format it runs."""
    from fp8lab.detect.fused import exposing_fused
    from fp8lab.specs.formats import FORMATS

    for fmt in FORMATS:
        try:
            exposing_fused("reciprocal", "divide", fmt, 1.0, 0x3F80_0000, 0x3F80_0010)
        except ValueError:
            continue  # a format the fused engine does not run


def _gemm() -> None:
    """The GEMM ports' compiled loops (vLLM's accumulation and the sequential model)."""
    from fp8lab.kernels.matmul import matmul_vllm_cpp
    from fp8lab.kernels.matmul_models import sequential

    codes = np.zeros((16, 16), np.uint8)  # K and N: multiples of 16, as vLLM's kernel needs
    scale = np.float32(1.0)
    matmul_vllm_cpp(codes, codes, scale, scale, "f32")
    sequential(np.zeros((2, 16), np.float32), np.zeros((2, 16), np.float32))


def _scales() -> None:
    """The compiled amax split of every pair of scale rules the ecosystem study compares."""
    from fp8lab.specs.scale_rules import get_rule
    from fp8lab.studies.amax_split_compiled import COMPILED, split_counts_compiled
    from fp8lab.studies.ecosystem import ECOSYSTEM_ROWS

    if not COMPILED:  # pragma: no cover - numba is a pinned dependency
        return
    pairs = {(r.own_rule, r.spec_rule) for r in ECOSYSTEM_ROWS if r.scheme != "nvfp4"}
    for own, spec in sorted(pairs):
        split_counts_compiled(get_rule(own), get_rule(spec), 0x3F80_0000, 0x3F80_0010)


def _port() -> None:
    """The compiled twin of the F32ToFp8 port (the proofs' encoder)."""
    from fp8lab.kernels.f32tofp8_twin import compiled_f32_to_fp8

    compiled_f32_to_fp8()(np.zeros(16, np.float32))


STEPS: dict[str, Callable[[], None]] = {
    "codecs": _codecs,
    "sweeps": _sweeps,
    "detect": _detect,
    "gemm": _gemm,
    "scales": _scales,
    "port": _port,
}


def _step(name: str) -> tuple[str, float]:
    t0 = time.process_time()
    STEPS[name]()
    return name, time.process_time() - t0


def warm(workers: int = 1) -> list[tuple[str, float]]:
    """Run every step of :data:`STEPS` (on ``workers`` processes); (step, CPU seconds) each."""
    return run_tasks(_step, [(name,) for name in STEPS], workers=min(workers, len(STEPS)))


def main(argv: list[str] | None = None) -> int:
    """``python -m fp8lab.bench.warm [--workers N]``: warm every loop, then say what it cost."""
    parser = argparse.ArgumentParser(
        prog="python -m fp8lab.bench.warm",
        description="Compile fp8lab's numba loops into their on-disk cache (changes no result).",
    )
    parser.add_argument("--workers", type=int, default=default_workers(), help="processes")
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    done = warm(args.workers)
    cpu = sum(seconds for _, seconds in done)
    print(
        f"compiled loops warmed: {len(done)} steps, {cpu:.1f} CPU-s, "
        f"{time.monotonic() - t0:.1f} s on {args.workers} worker(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
