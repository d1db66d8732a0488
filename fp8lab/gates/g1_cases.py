"""G1's cases under a static rule: what each call hands the kernel and what the reference reads.

Per tensor (the seed's layout): one case per scale and input dtype, ``x`` the
scale's words [N] and one float32 scale; the shard case hands the per-shard
scales and the reference reads their max. Per row: ``x`` [2, K], row ``i``
the words of scale ``(r + i) mod 7`` for the case's ``r``, scales [2]. Per
block: ``x`` [2, K] (K the longest word list rounded up to the block), block
``b`` of row ``i`` the words of scale ``(r + i + b) mod 7`` at their places,
scales [2, K/block]. Over the seven cases of a dtype every word meets every
scale, as in the per-tensor cases; padding is +0 (class ``zero``). The
shard case checks the collapse: its words are those placed for the rule's
format at the shards' max, without split words.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.populations.g1 import g1_population
from fp8lab.populations.g1_rules import g1_rule_population
from fp8lab.populations.words import Population, WordClass
from fp8lab.specs.scale_rules import Granularity, ScaleRule

__all__ = ["G1Case", "g1_cases"]

_ROWS = 2


@dataclass(frozen=True, eq=False)
class G1Case:
    """One G1 call: its name, float32 words (the harness's), their classes, the scales.

    ``handed`` is what the kernel gets (a float32, or float32 scales); ``scales``
    what the reference reads (the shard case's max in place of the shards).
    """

    name: str
    words: npt.NDArray[np.float32]
    labels: tuple[str, ...]
    dtype: str
    handed: object
    scales: object


def g1_cases(
    rule: ScaleRule,
    scales: Sequence[float],
    input_dtypes: Sequence[str],
    *,
    seed: int,
    special: bool,
    shard_scales: Sequence[float] = (),
) -> list[G1Case]:
    """Every call of a G1 run under ``rule``, in the gate's order.

    Raises:
        ValueError: for a shard case under a rule that is not per tensor.
    """
    run = tuple(float(s) for s in scales)
    pops = {s: _population(rule, s, run, seed, special) for s in run}
    if rule.granularity is Granularity.TENSOR:
        labels = {s: _labels(p) for s, p in pops.items()}
        cases = [
            G1Case(f"s={s!r}/{d}", pops[s].words, labels[s], d, np.float32(s), np.float32(s))
            for s in run
            for d in input_dtypes
        ]
    else:
        if shard_scales:
            raise ValueError(f"{rule.name}: the shard case is per tensor")
        layout = _rows if rule.granularity is Granularity.ROW else _blocks
        cases = [layout(rule, run, pops, r, d) for r in range(len(run)) for d in input_dtypes]
    if shard_scales:  # it checks the collapse: the words placed for the rule, no split words
        top = float(max(np.float32(v) for v in shard_scales))  # taken here, not by the kernel
        shards = tuple(float(v) for v in shard_scales)
        p = pops.get(top) or _population(rule, top, (top,), seed, special, split=False)
        handed = np.array(shards, np.float32)
        top_labels = _labels(p)
        cases += [
            G1Case(f"s=max{shards!r}/{d}", p.words, top_labels, d, handed, np.float32(top))
            for d in input_dtypes
        ]
    return cases


def _population(
    rule: ScaleRule, s: float, run: tuple[float, ...], seed: int, special: bool, split: bool = True
) -> Population:
    if split:
        pop = g1_rule_population(rule, s, run, seed=seed)
    else:
        pop = g1_population(s, seed=seed, element=rule.element)
    if special:
        return pop
    keep = ~pop.mask(WordClass.SPECIAL)
    if len(pop.classes) != keep.size:
        raise ValueError(f"{pop.name}: {len(pop.classes)} labels for {keep.size} words")
    labels = tuple(itertools.compress(pop.classes, keep.tolist()))
    return Population(pop.name, pop.words[keep].copy(), labels)


def _labels(pop: Population) -> tuple[str, ...]:
    return tuple(c.value for c in pop.classes)


def _padded(pop: Population, n: int) -> tuple[np.ndarray, list[str]]:
    pad = n - len(pop)
    words = np.concatenate([pop.words, np.zeros(pad, np.float32)])
    return words, [*_labels(pop), *[WordClass.ZERO.value] * pad]


def _rows(
    rule: ScaleRule, run: tuple[float, ...], pops: dict[float, Population], r: int, dtype: str
) -> G1Case:
    chosen = [run[(r + i) % len(run)] for i in range(_ROWS)]
    n = max(len(pops[s]) for s in chosen)
    rows = [_padded(pops[s], n) for s in chosen]
    words = np.stack([w for w, _ in rows])
    labels = tuple(lbl for _, ls in rows for lbl in ls)
    given = np.array(chosen, np.float32)
    name = f"rows s=({', '.join(repr(s) for s in chosen)})/{dtype}"
    return G1Case(name, words, labels, dtype, given, given)


def _blocks(
    rule: ScaleRule, run: tuple[float, ...], pops: dict[float, Population], r: int, dtype: str
) -> G1Case:
    assert rule.block is not None
    size = rule.block
    n = max(len(p) for p in pops.values())
    k = -(-n // size) * size
    padded = {s: _padded(p, k) for s, p in pops.items()}
    words = np.zeros((_ROWS, k), np.float32)
    labels: list[str] = []
    given = np.zeros((_ROWS, k // size), np.float32)
    for i in range(_ROWS):
        for b in range(k // size):
            s = run[(r + i + b) % len(run)]
            cut = slice(b * size, (b + 1) * size)
            words[i, cut] = padded[s][0][cut]
            labels += padded[s][1][cut]
            given[i, b] = s
    name = f"blocks s0={run[r]!r}/{dtype}"
    return G1Case(name, words, tuple(labels), dtype, given, given)
