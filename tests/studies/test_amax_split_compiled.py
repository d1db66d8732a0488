"""The compiled amax split against its numpy twin, pattern by pattern, and its engine choice.

Each pair runs on windows where scale steps turn: zero and the subnormals, the
first normal binade, 1.0, the format's largest value and the quotient's powers
of two on both sides of it, the largest finite amax, infinity and the NaNs,
and seeded random windows. Derived rules (``BASE[AXIS=VALUE]``) reach the
fields no declared rule sets.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fp8lab.specs.scale_rules import get_rule
from fp8lab.studies import amax_split_compiled as compiled
from fp8lab.studies import ecosystem as eco
from fp8lab.sweeps.range_run import RangeRun

_AT_448 = 0x43E00000  # amax 448: a quotient of 1.0
_WINDOWS = [
    (0, 1 << 13),  # +0 and the smallest subnormals
    (0x00800000 - (1 << 12), 0x00800000 + (1 << 12)),  # subnormal to normal
    (0x3F800000 - (1 << 12), 0x3F800000 + (1 << 12)),  # 1.0
    *((_AT_448 + k - (1 << 13), _AT_448 + k + (1 << 13)) for k in (-20 << 23, 0, 20 << 23)),
    (0x7F800000 - (1 << 12), 0x7F800000 + (1 << 12)),  # the largest finite, inf, NaN
    (0x80000000 - (1 << 12), 0x80000000),  # the last NaNs
    *(
        (int(lo), int(lo) + (1 << 12))
        for lo in np.random.default_rng(20261206).integers(0, (1 << 31) - (1 << 12), 8)
    ),
]

_DERIVED = [
    ("vllm-per-group-ue8m0", "vllm-per-group"),  # ceil-bits
    ("ocp-floor[e8m0_exponent=log2-float32]", "ocp-floor"),
    ("rceil[e8m0_nan=zero-byte;e8m0_inf=max-byte]", "rceil"),
    ("ocp-floor[e8m0_inf=exponent-bits;e8m0_zero=one]", "torchao-0.18-mxfp8-rceil"),
    ("rceil[e8m0_exponent=log2-float32;e8m0_nan_block=finite-to-zero]", "rceil"),
    (
        "vllm-per-tensor[scale_ub=1200.0;amax_floor=1e-06]",
        "torchao-0.18-float8-tensorwise[scale_from=reciprocal;scale_ub=1200.0]",
    ),
    ("vllm-per-token[apply=multiply;storage=multiplier]", "vllm-native-per-token"),
]
_PAIRS = [(r.own_rule, r.spec_rule) for r in eco.ECOSYSTEM_ROWS if r.scheme != "nvfp4"] + _DERIVED


def _numpy(own: str, spec: str) -> tuple[np.ndarray, np.ndarray]:
    parts = [eco.split_verdicts(own, spec, lo, hi) for lo, hi in _WINDOWS]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _compiled(a: compiled.ScaleProgram, b: compiled.ScaleProgram) -> tuple[np.ndarray, np.ndarray]:
    verdicts = compiled._pair(a, b)
    split = [np.empty(hi - lo, np.bool_) for lo, hi in _WINDOWS]
    moved = [np.empty(hi - lo, np.bool_) for lo, hi in _WINDOWS]
    for (lo, _), s, m in zip(_WINDOWS, split, moved, strict=True):
        verdicts(lo, s, m)
    return np.concatenate(split), np.concatenate(moved)


def _programs(own: str, spec: str) -> tuple[compiled.ScaleProgram, compiled.ScaleProgram]:
    return compiled.rule_program(get_rule(own)), compiled.rule_program(get_rule(spec))


@pytest.mark.parametrize(("own", "spec"), _PAIRS, ids=lambda n: n)
def test_the_compiled_verdicts_are_numpys_pattern_by_pattern(own: str, spec: str) -> None:
    want_split, want_moved = _numpy(own, spec)
    got_split, got_moved = _compiled(*_programs(own, spec))
    assert np.array_equal(got_split, want_split), np.flatnonzero(got_split != want_split)[:5]
    assert np.array_equal(got_moved, want_moved), np.flatnonzero(got_moved != want_moved)[:5]
    assert int(want_moved.sum()) > 0 or own.startswith("vllm-per-token[")  # a pair that differs


# (rule, field, planted value): one field of a rule's program, wrong, run against the rule itself
_PLANTED = [
    # a float64 quotient taken in float32 (a lone division rounds alike in both: with 1 / amax)
    ("torchao-0.18-float8-tensorwise[scale_from=reciprocal]", "wide", False),
    ("torchao-0.18-float8-tensorwise", "multiplier", False),  # a multiplier read as a divisor
    ("torchao-0.18-float8-tensorwise", "has_floor", False),  # the amax floor forgotten
    ("torchao-0.18-mxfp8-floor", "emax", 9),  # the format's exponent off by one
    ("torchao-0.18-mxfp8-rceil", "log2", False),  # a log2 exponent taken from the bits
    ("torchao-0.18-mxfp8-rceil", "byte0", 2.0**127),  # byte 0's factor as OCP's
    ("torchao-0.18-mxfp8-rceil", "inf_max", False),  # an infinite quotient's byte 255, not 254
    ("vllm-per-tensor", "recip_from", True),  # amax * (1 / M), not amax / M
    ("vllm-per-group-ue8m0", "ceil_bits", False),  # a power-of-two scale left unrounded
    ("ocp-floor[e8m0_exponent=log2-float32]", "log2", False),  # a log2 floor from the bits
    ("ocp-floor", "byte255", 0.0),  # a NaN block's finite elements sent to zero
    ("ocp-floor", "nan_byte", 0),  # a NaN amax's byte as 0
    ("vllm-per-group", "skip", False),  # a NaN amax propagated where the rule skips it
    ("vllm-per-token", "has_min", False),  # vLLM's min_scale forgotten
    ("compressed-tensors-0.20-token", "has_zero", False),  # the zero scale's stand-in forgotten
    ("vllm-per-tensor[scale_ub=1200.0]", "has_ub", False),  # the upper bound forgotten
]


@pytest.mark.parametrize(("rule", "field", "value"), _PLANTED, ids=str)
def test_a_planted_field_in_a_program_is_seen_by_the_windows(
    rule: str, field: str, value: object
) -> None:
    program, _ = _programs(rule, rule)
    assert getattr(program, field) != value, "the plant must change the field"
    want_split, want_moved = _numpy(rule, rule)
    assert not want_split.any() and not want_moved.any()  # a rule against itself: no split
    planted = program._replace(**{field: value})  # type: ignore[arg-type]
    got_split, got_moved = _compiled(planted, program)
    assert got_split.any() or got_moved.any()


@pytest.mark.parametrize("pair", [0, 4, 7], ids=lambda i: _PAIRS[i][0])
def test_both_engines_count_alike_over_a_range_of_chunks(pair: int) -> None:
    # lengths are multiples of 16: numpy's fmax gives NaN for a signalling NaN in the scalar
    # loop of an array's last elements, the other operand in its vector loop and the compiled one
    own, spec = _PAIRS[pair]
    run = RangeRun(start=0x7F800000 - 3 * 4096 - 16, stop=0x7F800000 + 5 * 4096 + 32, chunk=4096)
    got = eco.amax_split(own, spec, dataclasses.replace(run, workers=1), engine="compiled")
    want = eco.amax_split(own, spec, dataclasses.replace(run, workers=1), engine="numpy")
    assert (got.engine, want.engine) == ("compiled", "numpy")
    assert dataclasses.replace(got, engine="numpy") == want and got.first_differ >= 0
    assert got.differ_nan_amax > 0 or pair == 7  # mxfp8's two rules split at no NaN


def test_an_unknown_engine_and_a_compiled_nvfp4_pair_are_refused() -> None:
    window = RangeRun(start=0, stop=16, workers=1)
    with pytest.raises(ValueError, match="unknown amax split engine 'fast'"):
        eco.amax_split("rceil", "ocp-floor", window, engine="fast")
    with pytest.raises(ValueError, match="unknown amax split engine 'fast'"):
        eco.amax_split("torchao-0.18-nvfp4", "te-nvfp4-divide", window, engine="fast")
    with pytest.raises(ValueError, match="does not run"):
        eco.amax_split("torchao-0.18-nvfp4", "te-nvfp4-divide", window, engine="compiled")
    assert eco.amax_split("torchao-0.18-nvfp4", "te-nvfp4-divide", window).engine == "numpy"
    assert eco.amax_split("rceil", "ocp-floor", window).engine == "compiled"  # auto


# ScaleRule fields the scale step does not read on a float32 amax: the element step, the
# reduction that makes the amax, and the declaration's names
_NOT_READ = {
    "name", "source", "granularity", "block", "clamp", "nan_code", "signed_zero",
    "element_rounding", "arithmetic", "input_zero_scale", "amax_init", "amax_lanes",
    "saturate", "scale_source", "scale_format",
}  # fmt: skip


def test_every_field_of_a_scale_rule_is_read_or_named_as_not_read() -> None:
    # a new field must reach the program (and the numpy step) or be listed above
    fields = {f.name for f in dataclasses.fields(get_rule("rceil"))}
    read = {
        "element", "amax_nan", "amax_floor", "scale_ub", "scale_from", "min_scale", "pow2",
        "apply", "quotient", "storage", "zero_scale", "e8m0_zero", "e8m0_inf",
        "e8m0_nan_block", "e8m0_exponent", "e8m0_nan",
    }  # fmt: skip
    assert fields == read | _NOT_READ, sorted(fields ^ (read | _NOT_READ))
