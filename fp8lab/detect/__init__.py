"""Detect the divide-vs-reciprocal mutant: brute force, exact enumeration, sweeps, designs.

The mutant computes ``x / s`` where the kernel multiplies by ``fl(1/s)``. It
changes a byte only where one of the two float32 results is exactly on a
rounding midpoint of the format (:mod:`fp8lab.detect.structure`).
"""

from fp8lab.detect.bf16 import all_bf16_exposing, bf16_exposing
from fp8lab.detect.brute import BRUTE_ENGINES, brute_force, use_fused
from fp8lab.detect.crosscheck import CrossCheck, crosscheck, window_around
from fp8lab.detect.design import Detector, design_detector
from fp8lab.detect.enumeration import (
    benchmark_enumeration,
    candidate_inputs,
    enumerate_exposing,
    enumeration_is_complete,
)
from fp8lab.detect.fused import exposing_fused, fused_applies
from fp8lab.detect.golden import GoldenVectors, check_golden, load_golden, write_golden
from fp8lab.detect.midpoints import MidpointTable, midpoint_table
from fp8lab.detect.pair import BUILTIN_PAIR_KERNELS, KernelError, quantize_codes, resolve_kernel
from fp8lab.detect.random_draws import RandomDrawCheck, draw_probability, random_draw_check
from fp8lab.detect.records import ExposedInput, ExposureRecord
from fp8lab.detect.scales import as_scales, distinct_scales, log_scales, parse_scales
from fp8lab.detect.structure import describe_sweep
from fp8lab.detect.sweep import SweepRecord, sweep
from fp8lab.detect.tie_population import SeedScore, TiePopulation, seed_scores, tie_population

__all__ = [
    "BRUTE_ENGINES",
    "BUILTIN_PAIR_KERNELS",
    "CrossCheck",
    "Detector",
    "ExposedInput",
    "ExposureRecord",
    "GoldenVectors",
    "KernelError",
    "MidpointTable",
    "RandomDrawCheck",
    "SeedScore",
    "SweepRecord",
    "TiePopulation",
    "all_bf16_exposing",
    "as_scales",
    "bf16_exposing",
    "benchmark_enumeration",
    "brute_force",
    "candidate_inputs",
    "check_golden",
    "crosscheck",
    "describe_sweep",
    "distinct_scales",
    "design_detector",
    "draw_probability",
    "enumerate_exposing",
    "enumeration_is_complete",
    "exposing_fused",
    "fused_applies",
    "load_golden",
    "log_scales",
    "midpoint_table",
    "parse_scales",
    "quantize_codes",
    "random_draw_check",
    "resolve_kernel",
    "seed_scores",
    "sweep",
    "tie_population",
    "use_fused",
    "window_around",
    "write_golden",
]
