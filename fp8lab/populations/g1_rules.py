"""G1's words under a static rule: the seed's structure for its format, and where neighbours split.

For a static rule R (:mod:`fp8lab.specs.static_rules`) the words at scale s
are :func:`~fp8lab.populations.g1.g1_population` placed for R's element
format (for e4m3fn the seed's 4323 words exactly), then, in a ``split`` class,
words derived from the rule: for each neighbour R[A:=v]
(:func:`~fp8lab.specs.static_rules.static_neighbours`; ``nan_code`` aside, a
comparison rather than an output) and each input dtype on which those words
expose it in fewer than :data:`MIN_EXPOSED` of the seven cases, up to
:data:`SPLITS_PER_SCALE` words per scale on which the exact reference gives R
and R[A:=v] different codes. The candidates are the float32 and bfloat16
neighbourhoods of every scaled midpoint of the format, ``fl(m * s)`` and two
ulps either side, in order of ``m``: where divide and reciprocal, float32
and bfloat16 arithmetic, or ties to even and away split. A flip no
candidate splits keeps its count (the gate's meta test lists them, each
with the reason). Computed once per rule and scale.
"""

from __future__ import annotations

import dataclasses
import itertools
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.populations.g1 import G1_SEED, g1_population
from fp8lab.populations.words import Population, WordClass
from fp8lab.refs.static_quant import reference_static_quant
from fp8lab.specs.format_dtypes import INPUT_DTYPES, bfloat16_dtype, input_dtype
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import Granularity, ScaleRule
from fp8lab.specs.static_rules import static_neighbours

__all__ = ["MIN_EXPOSED", "SPLITS_PER_SCALE", "g1_rule_population", "split_candidates"]

MIN_EXPOSED = 3  # cases per input dtype that must expose each neighbour
SPLITS_PER_SCALE = 3  # words added per scale for a neighbour exposed in fewer


def split_candidates(element: str, scale: float) -> npt.NDArray[np.float32]:
    """The scaled midpoints of ``element`` and two float32 and bfloat16 ulps either side."""
    fmt = get_format(element)
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]
    mids = np.array([float((a + b) / 2) for a, b in itertools.pairwise(mags)], np.float32)
    centre = np.concatenate([mids, -mids]) * np.float32(scale)
    f32 = [centre]
    for k in (1, 2):
        f32 += [_steps(centre, k), _steps(centre, -k)]
    bf16 = bfloat16_dtype()
    bf = centre.astype(bf16)
    b16 = [bf.astype(np.float32)]
    bits = bf.view(np.uint16).astype(np.int32)
    for k in (1, 2, -1, -2):
        b16.append((bits + k).astype(np.uint16).view(bf16).astype(np.float32))
    with np.errstate(over="ignore", invalid="ignore"):
        words = np.stack(f32 + b16, axis=1).reshape(-1)
    return words[np.isfinite(words)].astype(np.float32)


def _steps(v: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """``v`` moved ``k`` float32 ulps (along its bit pattern, same sign)."""
    bits = v.view(np.int32).astype(np.int64) + k
    return np.clip(bits, -(2**31), 2**31 - 1).astype(np.int32).view(np.float32)


def _codes(rule: ScaleRule, words: np.ndarray, dtype: np.dtype, scale: float) -> np.ndarray:
    return reference_static_quant(words.astype(dtype), np.float32(scale), rule)


def _differ(rule: ScaleRule, a: np.ndarray, b: np.ndarray) -> npt.NDArray[np.bool_]:
    fmt = get_format(rule.element)
    nan = np.array([fmt.is_nan_code(c) for c in range(256)], np.bool_)
    return np.asarray((a != b) & ~(nan[a] & nan[b]), np.bool_)


@cache
def _splits(
    rule: ScaleRule, scales: tuple[float, ...], seed: int
) -> dict[float, tuple[float, ...]]:
    """Per scale, the split words the rule's weakly exposed neighbours add (in order)."""
    bases = {s: g1_population(s, seed=seed, element=rule.element).words for s in scales}
    dtypes = [input_dtype(d) for d in INPUT_DTYPES]
    own = {(s, d): _codes(rule, w, d, s) for s, w in bases.items() for d in dtypes}
    added: dict[float, list[float]] = {s: [] for s in scales}
    for axis, _, other in static_neighbours(rule):
        if axis == "nan_code":
            continue
        for dtype in dtypes:
            exposed = 0
            for s, words in bases.items():
                if exposed < MIN_EXPOSED:
                    diff = _differ(rule, own[s, dtype], _codes(other, words, dtype, s))
                    exposed += bool(diff.any())
            if exposed >= MIN_EXPOSED:
                continue
            for s in scales:
                pool = split_candidates(rule.element, s)
                pool = pool[np.asarray(pool.astype(dtype).astype(np.float32) == pool)]
                diff = _differ(rule, _codes(rule, pool, dtype, s), _codes(other, pool, dtype, s))
                fresh = [float(w) for w in pool[diff] if float(w) not in added[s]]
                added[s] += fresh[:SPLITS_PER_SCALE]
    return {s: tuple(v) for s, v in added.items()}


def g1_rule_population(
    rule: ScaleRule, scale: float, scales: tuple[float, ...], *, seed: int = G1_SEED
) -> Population:
    """G1's words for ``rule`` at ``scale`` (one of ``scales``, the gate's seven).

    The split words depend on every scale of the run (a neighbour exposed in
    three cases needs none), so the run's scales are part of the key.
    """
    base = g1_population(scale, seed=seed, element=rule.element)
    extra = np.array(_splits(_key(rule), tuple(scales), seed)[scale], np.float32)
    if not extra.size:
        return base
    words = np.concatenate([base.words, extra])
    classes = base.classes + (WordClass.SPLIT,) * extra.size
    return Population(f"{base.name}+split({rule.name})", words, classes)


def _key(rule: ScaleRule) -> ScaleRule:
    """``rule`` per tensor, without name and source: its element arithmetic alone.

    Words split word by word, whatever the layout, so rules that compute alike
    share their words.
    """
    return dataclasses.replace(
        rule, name="rule", source="rule", granularity=Granularity.TENSOR, block=None
    )
