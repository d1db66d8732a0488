"""The quant_schemes notebook's numbers: GQ on every port, the detectors, the FLOOR/RCEIL split.

Each function computes one table of the quant_schemes notebook from the package's own parts:
:func:`fp8lab.gates.run_gq` on the ports (:mod:`fp8lab.kernels.scheme`), the
exhaustive amax sweeps (:mod:`fp8lab.sweeps.amax`), and the words two
rules split on in GQ's population (:mod:`fp8lab.populations.schemes`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.gates import GQ_SCHEMES, run_gq
from fp8lab.gates.records import GateResult
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.specs.scale_rules import RULES, Apply, ScaleRule, get_rule
from fp8lab.sweeps.amax import ALL_POSITIVE, NVFP4_PAIRS, PAIRS, sweep_pair
from fp8lab.sweeps.range_run import RangeRun

__all__ = [
    "PUBLISHED_SWEEPS",
    "SPLIT_PAIRS",
    "SWEEP_COMMAND",
    "SplitRow",
    "SweepRow",
    "floor_rceil_binades",
    "floor_rceil_bytes",
    "gq_on_ports",
    "population_splits",
    "published_sweep_rows",
    "scheme_of",
    "sweep_rows",
]

SWEEP_COMMAND = "python -m fp8lab.sweeps.amax"
# docs/gates/gq.md "Exhaustive amax sweeps" (that command, all 2**31 patterns):
# (pair, S_enc) -> (differ, NaN)
PUBLISHED_SWEEPS: dict[tuple[str, float], tuple[int, int]] = {
    ("floor-vs-rceil", 1.0): (517_996_296, 0),
    ("log2-vs-bits-ceil", 1.0): (3_212, 0),
    ("log2-vs-bits-floor", 1.0): (7_096, 0),
    ("nvfp4-divide-vs-reciprocal", 1.0): (8_388_622, 8_388_607),
    ("nvfp4-divide-vs-reciprocal", 2688.0): (8_388_626, 8_388_607),
    ("nvfp4-divide-vs-fused", 1.0): (15, 0),
    ("nvfp4-divide-vs-fused", 2688.0): (46, 0),
    ("nvfp4-reciprocal-vs-fused", 1.0): (8_388_607, 8_388_607),
    ("nvfp4-reciprocal-vs-fused", 2688.0): (8_388_638, 8_388_607),
}


def scheme_of(rule: str | ScaleRule) -> str:
    """The GQ scheme (``GQ_SCHEMES``) whose granularity, block and scale format ``rule`` has.

    Raises:
        ValueError: for an unknown rule or one no GQ scheme describes.
    """
    spec = get_rule(rule)
    for scheme, shape in GQ_SCHEMES.items():
        if shape == (spec.granularity, spec.block, spec.scale_format):
            return scheme
    raise ValueError(f"no GQ scheme describes rule {spec.name!r}")


def gq_on_ports(seed: int) -> list[GateResult]:
    """GQ on the built-in port of every rule in ``RULES``, under that rule."""
    return [
        run_gq(
            functools.partial(scheme_quant, rule=name),
            scheme=scheme_of(name),
            rule=name,
            kernel_name=f"port:{name}",
            seed=seed,
        )
        for name in RULES
    ]


@dataclass(frozen=True)
class SweepRow:
    """One exhaustive (or windowed) amax sweep, with the command that reproduces it."""

    pair: str
    s_enc: float | None
    start: int
    stop: int
    examined: int
    differ: int
    differ_nan_amax: int
    first_differ: str
    wall_seconds: float
    published_differ: int | None
    command: str


def sweep_rows(start: int = 0, stop: int = ALL_POSITIVE) -> list[SweepRow]:
    """Every pair of ``PAIRS`` over amax patterns ``[start, stop)`` (NVFP4 at S_enc 1 and 2688).

    ``published_differ`` is the the manual's count when the range is all of ``[0, 2**31)``.
    """
    rows = []
    full = (start, stop) == (0, ALL_POSITIVE)
    for pair in PAIRS:
        for s_enc in (1.0, 2688.0) if pair in NVFP4_PAIRS else (1.0,):
            r = sweep_pair(pair, run=RangeRun(start=start, stop=stop), s_enc=s_enc)
            published = PUBLISHED_SWEEPS[(pair, s_enc)][0] if full else None
            rows.append(
                SweepRow(
                    pair,
                    r.s_enc,
                    start,
                    stop,
                    r.examined,
                    r.differ,
                    r.differ_nan_amax,
                    f"{r.first_differ:#010x}" if r.first_differ >= 0 else "-",
                    r.wall_seconds,
                    published,
                    f"{SWEEP_COMMAND} {pair}",
                )
            )
    return rows


def published_sweep_rows() -> list[dict[str, object]]:
    """The manual's "Exhaustive amax sweeps": each pair's count over all 2**31 patterns."""
    return [
        {
            "pair": pair,
            "s_enc": s_enc if pair in NVFP4_PAIRS else None,
            "examined": ALL_POSITIVE,
            "differ": differ,
            "differ_nan_amax": nan,
            "command": f"{SWEEP_COMMAND} {pair}",
        }
        for (pair, s_enc), (differ, nan) in PUBLISHED_SWEEPS.items()
    ]


def floor_rceil_bytes(
    amax: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The e8m0 scale bytes the ``ocp-floor`` and ``rceil`` ports give blocks of amax ``amax``.

    Each amax becomes one 32-element block (the amax, then zeros).
    """
    a = np.asarray(amax, np.float32).reshape(-1)
    blocks = np.zeros((a.size, 32), np.float32)
    blocks[:, 0] = a
    x = blocks.reshape(1, -1)
    _, floor = scheme_quant(x, "ocp-floor")
    _, rceil = scheme_quant(x, "rceil")
    return floor.reshape(-1), rceil.reshape(-1)


def floor_rceil_binades(exponents: range) -> npt.NDArray[np.int64]:
    """Amax patterns on which FLOOR and RCEIL split, per biased float32 exponent in ``exponents``.

    Binade ``e`` is the patterns ``[e << 23, (e + 1) << 23)``; 255 holds +inf and the NaNs.

    Raises:
        ValueError: for an exponent outside ``[0, 256)``.
    """
    if exponents and not (min(exponents) >= 0 and max(exponents) < 256):
        raise ValueError(f"biased exponents lie in [0, 256), got {exponents}")
    return np.array(
        [
            sweep_pair(PAIRS[0], run=RangeRun(start=e << 23, stop=(e + 1) << 23)).differ
            for e in exponents
        ],
        np.int64,
    )


# Pairs of rules real code mixes up that are not functions of one amax alone.
SPLIT_PAIRS: dict[str, tuple[ScaleRule, ScaleRule]] = {
    "per-token divide vs reciprocal": (
        RULES["vllm-per-token"],
        dataclasses.replace(
            RULES["vllm-per-token"], name="vllm-per-token/reciprocal", apply=Apply.RECIPROCAL
        ),
    ),
    "per-group divide vs reciprocal": (
        RULES["vllm-per-group"],
        dataclasses.replace(
            RULES["vllm-per-group"], name="vllm-per-group/reciprocal", apply=Apply.RECIPROCAL
        ),
    ),
    "per-token CUDA vs native": (RULES["vllm-per-token"], RULES["vllm-native-per-token"]),
    "mxfp8 FLOOR vs RCEIL": (RULES["ocp-floor"], RULES["rceil"]),
}


@dataclass(frozen=True)
class SplitRow:
    """Words (codes and scales) on which two rules split, over GQ's population at one seed."""

    pair: str
    rule_a: str
    rule_b: str
    words: int
    differ: int
    by_case: dict[str, int]


def _split_words(a: ScaleRule, b: ScaleRule, x: np.ndarray) -> tuple[int, int]:
    ca, sa = scheme_quant(x, a)
    cb, sb = scheme_quant(x, b)
    sa_bytes = sa.view(np.uint8).reshape(sa.size, -1)
    sb_bytes = sb.view(np.uint8).reshape(sb.size, -1)
    differ = int((ca != cb).sum()) + int((sa_bytes != sb_bytes).any(axis=1).sum())
    return ca.size + sa.size, differ


def population_splits(seed: int) -> list[SplitRow]:
    """For each of ``SPLIT_PAIRS``: how many of GQ's words tell the two rules apart (the margin)."""
    rows = []
    for pair, (a, b) in SPLIT_PAIRS.items():
        words = 0
        by_case: Counter[str] = Counter()
        for label, x in scheme_population(a.element, seed):
            with np.errstate(all="ignore"):
                n, d = _split_words(a, b, x)
            words += n
            by_case[label] += d
        caught = {k: v for k, v in by_case.items() if v}
        rows.append(SplitRow(pair, a.name, b.name, words, sum(caught.values()), caught))
    return rows
