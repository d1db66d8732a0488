"""Seeded populations for the scale rules: the inputs where the rules and their bugs split.

Each case is a float32 [rows, K] array (K a multiple of 128, so every block
size in the catalogue tiles it) in which every 16-element block carries the
case's constructed amax, so each granularity sees it:

* ``random``: seeded normals over six decades, both signs;
* ``ties``: amax ``M * 2**k`` (the scale is then exact for ``amax / M``) and
  the other elements ``2**k`` times the midpoints between element magnitudes,
  so they land on element-format ties after scaling;
* ``near-ties``: amax ``M * c`` for scales ``c`` that are not powers of two,
  and elements the float32 nearest ``midpoint * s`` and one ulp either side
  (``s = float32(amax / M)``): where ``x / s`` and ``x * float32(1/s)`` split;
* ``pow2-amax``: amax on ``2**j``, one float32 ulp below and above (where FLOOR
  and RCEIL, and float ``log2`` and exponent bits, split), for ``j`` across the
  float32 range, and ``M * 2**j`` likewise;
* ``zero``, ``nan``, ``neg-nan``, ``inf``, ``subnormal`` (float32-subnormal
  amax), ``at-max`` (amax = the element max) and ``negative`` rows;
* ``below-floor``: amaxes under the eps floors rules apply (1e-12, 1e-10),
  where the floor decides the scale, and where a floor compared in float32
  (``float32(1e-12)``) and one compared in float64 give different scales;
* ``divide-split``: amax from :data:`DIVIDE_SPLIT_AMAXES` and elements where
  ``x / s`` and ``x * float32(1/s)`` (``s = float32(amax / M)``) encode to
  different codes, every one a bfloat16 value, so both input dtypes carry them:
  a rule's divide/reciprocal twin fails this case in each dtype, beside
  ``near-ties`` and ``amax-last``;
* ``log2-split`` (three calls of four rows each): amax from
  :data:`E8M0_LOG2_SPLIT_AMAX_BITS`, each just above ``448 * 2**k``, where
  ``d = float32(amax / 448)`` has a float32 ``log2`` that rounds down onto
  ``k``: torchao RCEIL's ``ceil(log2(d))`` is one e8m0 byte below the
  exponent-bits ceiling there (``e8m0_exponent``). Each call is one assertion,
  so a port that takes the bits for the ``log2`` fails at least three of them
  (on float32 input; bfloat16 holds none of these amaxes);
* ``nan-lane`` (not for e2m1fn): in every 32 elements the row's amax first and a
  NaN 16 elements on, the rest below half the amax: a NaN in the lane of the
  block's amax for every lane width that divides 16, where a vectorised amax
  whose lanes keep NaN and whose combination drops it (``amax_lanes``) loses
  the amax, and a scalar ``fmaxf`` keeps it;
* ``amax-last``: magnitudes rising along the row by a factor of about
  ``2**(1/32)`` (distinct in bfloat16 too), so every block of every size, the
  row and the tensor hold their amax once, in their last element: where an
  amax reduction one element short (or one element shifted) splits. The tiled
  cases above cannot show it, as each block repeats its amax.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import encode
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import get_format

__all__ = [
    "CASES",
    "RULE_SPLIT",
    "E8M0_LOG2_SPLIT_AMAX_BITS",
    "NVFP4_FUSED_SPLIT_AMAX_BITS",
    "DIVIDE_SPLIT_AMAXES",
    "NVFP4_SPLIT_AMAX_BITS",
    "case_labels",
    "divide_split_elements",
    "scheme_population",
]

CASES = (
    "random",
    "ties",
    "near-ties",
    "pow2-amax",
    "zero",
    "nan",
    "neg-nan",
    "inf",
    "subnormal",
    "at-max",
    "negative",
    "amax-last",
    "below-floor",
)
_DIVIDE_SPLIT = "divide-split"
_NAN_LANE = "nan-lane"
# the class of GQ's calls derived from the rule's split table (fp8lab.populations.rule_splits)
RULE_SPLIT = "rule-split"
# bfloat16 amaxes whose scale float32(amax / 448) splits x / s from x * float32(1/s) on the
# most bfloat16 inputs x <= amax with a normal e4m3fn quotient: mantissa 1.53125 on 29 of
# them, 1.625, 1.078125 and 1.296875 on 15 each (found by scanning every bfloat16 amax of
# [2**-12, 2**13) and every bfloat16 x; the split is the same at any power-of-two multiple).
DIVIDE_SPLIT_AMAXES = (0.095703125, 0.765625, 12.25, 0.203125, 2.15625, 41.5)
_SUB = 16  # the smallest block in the catalogue (NVFP4)
# float32 amax patterns on which float32(amax / 448)'s e8m0 byte under ceil(float32 log2) (torchao
# 0.18 RCEIL, e8m0_exponent = "log2-float32") is one below the exponent-bits ceiling ("bits"):
# found over all 2^31 non-negative patterns by comparing fp8lab.kernels.scheme.amax_scales under
# torchao-0.18-mxfp8-rceil and under that rule with e8m0_exponent = "bits". There are 6,289,
# each 1 to 40 patterns (fewer near k = 0, none for k in [-4, 3]) above 448 * 2**k,
# k = -127..119 (at k = -127 the quotient is subnormal). Here, for twelve k spread over that
# range, the highest split pattern of its binade (the pattern above it does not split; a test
# re-derives both), four to a call: k = -127, -118, -96, -70 | -45, -20, 12, 37 | 64, 88, 105, 119.
E8M0_LOG2_SPLIT_AMAX_BITS = (
    (0x0460_0028, 0x08E0_0027, 0x13E0_0027, 0x20E0_0027),
    (0x2D60_0014, 0x39E0_0009, 0x49E0_0004, 0x5660_0014),
    (0x63E0_0027, 0x6FE0_0027, 0x7860_0027, 0x7F60_0027),
)
_LOG2_SPLIT = "log2-split"
# TE's two NVFP4 block-scale formulas, amax/6*S_enc and amax*(1/6)*S_enc, give different
# e4m3fn bytes at S_enc = 1 on exactly these 15 finite amax patterns, (1.78125 - ulp) * 2^e
# for e = -4..10: found over all 2^31 positive patterns by sweep_pair(
# "nvfp4-divide-vs-reciprocal", s_enc=1.0) (docs/gates/gq.md "Exhaustive amax sweeps"; a test
# re-derives each one). A tensor holding 2688 = 448 * 6 has S_enc = 2688 / 2688 = 1.
NVFP4_SPLIT_AMAX_BITS = tuple(0x3DE3_FFFF + (j << 23) for j in range(15))
_NVFP4_SPLIT = "nvfp4-formula-split"
# amax * (1/6) * S_enc and amax * (S_enc * (1/6)) (te-nvfp4-reciprocal and te-nvfp4-fused) are
# one expression at S_enc = 1, so the case above cannot tell them apart. They split on exactly
# these amax patterns in (0, 1] at S_enc = 2688 (global amax 1) and 1792 (global amax 1.5, GQ's
# second call): every pattern from 2**-19 up, where both bytes leave 0, was tried by
# nvfp4_block_scales (31 at 2688, 33 at 1792; tests/meta/test_gq_nvfp4_goes_red.py re-derives
# them and shows their float32 neighbours agree).
NVFP4_FUSED_SPLIT_AMAX_BITS: dict[float, tuple[int, ...]] = {
    2688.0: (
        0x3612_4925,
        0x3736_DB6E,
        *(0x3876_DB6D + (j << 23) for j in range(15)),
        *(0x388D_B6DB + (j << 23) for j in range(14)),
    ),
    1792.0: (
        0x365B_6DB7,
        0x3724_9248,
        0x37BF_FFFF,
        0x3832_4925,
        0x384D_B6DA,
        *(0x3890_0000 + (j << 23) for j in range(14)),
        *(0x38D4_9248 + (j << 23) for j in range(14)),
    ),
}
_NVFP4_FUSED_SPLIT = "nvfp4-fused-split"


def case_labels(element: str | FormatSpec) -> tuple[str, ...]:
    """The case labels of :func:`scheme_population` for ``element``, in order.

    e2m1fn (NVFP4, the one scheme GQ runs with those elements) adds two cases built
    for its block-scale formulas; every other element format adds ``divide-split``
    (e2m1fn's six magnitudes leave no quotient for it to split) and ``log2-split``
    three times (one label, three calls).
    """
    nvfp4 = (_NVFP4_SPLIT, _NVFP4_FUSED_SPLIT)
    if get_format(element).name == "e2m1fn":
        return (*CASES, *nvfp4)
    return (
        *CASES,
        _NAN_LANE,
        _DIVIDE_SPLIT,
        *(_LOG2_SPLIT,) * len(E8M0_LOG2_SPLIT_AMAX_BITS),
    )


def _nvfp4_split_rows(rng: np.random.Generator, k: int) -> npt.NDArray[np.float32]:
    """Three tensors (rows) of amax 2688 (S_enc = 1), with five designed blocks each.

    Each designed block's amax is one of :data:`NVFP4_SPLIT_AMAX_BITS`, the rest of
    the block below it.
    """
    amaxes = np.array(NVFP4_SPLIT_AMAX_BITS, np.uint32).view(np.float32)
    rows = (rng.uniform(-0.05, 0.05, (3, k))).astype(np.float32)
    rows[:, 0] = np.float32(2688.0)
    for j, amax in enumerate(amaxes):
        row, block = divmod(j, 5)
        lo = (block + 1) * _SUB
        rows[row, lo : lo + _SUB] = (rng.uniform(-0.9, 0.9, _SUB) * amax).astype(np.float32)
        rows[row, lo + int(rng.integers(_SUB))] = amax * rng.choice([-1.0, 1.0])
    return rows


def _nvfp4_fused_split_rows(rng: np.random.Generator, k: int) -> npt.NDArray[np.float32]:
    """Three tensors (rows) of amax 1 (S_enc 2688; 1792 in GQ's 1.5x call), 15 designed blocks each.

    Row ``r`` holds every third amax of each list of
    :data:`NVFP4_FUSED_SPLIT_AMAX_BITS` (at most 1.0), from the ``r``-th on,
    eight at 2688 and seven at 1792, each the amax of its block.
    """
    at = {
        s: np.array(b, np.uint32).view(np.float32) for s, b in NVFP4_FUSED_SPLIT_AMAX_BITS.items()
    }
    rows = rng.uniform(-0.05, 0.05, (3, k)).astype(np.float32)
    rows[:, 0] = np.float32(1.0)
    for r in range(3):
        designed = [*at[2688.0][r::3][:8], *at[1792.0][at[1792.0] <= 1][r::3][:7]]
        for j, amax in enumerate(designed):
            lo = (j + 1) * _SUB
            rows[r, lo : lo + _SUB] = (rng.uniform(-0.9, 0.9, _SUB) * amax).astype(np.float32)
            rows[r, lo + int(rng.integers(_SUB))] = amax * rng.choice([-1.0, 1.0])
    return rows


def _nan_lane_rows(rng: np.random.Generator, k: int) -> npt.NDArray[np.float32]:
    """Two rows: in every 32 elements the row's amax, then a NaN 16 elements on."""
    amax = np.array([[3.0], [0.02]])
    rows = rng.uniform(-0.5, 0.5, (2, k)) * amax
    rows[:, ::32] = amax * rng.choice([-1.0, 1.0], (2, k // 32))
    rows[:, 16::32] = np.nan
    out: npt.NDArray[np.float32] = rows.astype(np.float32)
    return out


def _tile(rows: list[list[float]], k: int) -> npt.NDArray[np.float32]:
    """Repeat each 16-element pattern along K."""
    out = np.array([(r * (k // len(r)))[:k] for r in rows], np.float64)
    return out.astype(np.float32)


def _with_amax(amaxes: list[float], rng: np.random.Generator, k: int) -> np.ndarray:
    """One row per amax: the amax first in every 16-block, the rest below it."""
    rows = []
    for a in amaxes:
        rest = (rng.uniform(-1.0, 1.0, _SUB - 1) * a).tolist()
        rows.append([a, *rest])
    return _tile(rows, k)


def divide_split_elements(amax: float, fmt: FormatSpec) -> npt.NDArray[np.float32]:
    """The positive bfloat16 ``x <= amax`` whose codes under ``x / s`` and ``x * (1/s)`` differ.

    ``s = float32(amax / fmt.max)``; only quotients in ``fmt``'s normal range count.
    """
    top = np.uint32(np.float32(amax).view(np.uint32) >> np.uint32(16))
    x = (np.arange(1, int(top) + 1, dtype=np.uint32) << np.uint32(16)).view(np.float32)
    s = np.float32(amax) / np.float32(float(fmt.max))
    with np.errstate(over="ignore"):
        quotient, product = x / s, x * (np.float32(1.0) / s)
    split = encode(quotient, fmt) != encode(product, fmt)
    normal = np.abs(quotient) >= np.float32(2.0**fmt.minexp)
    out: npt.NDArray[np.float32] = x[split & normal]
    return out


def _divide_split_rows(fmt: FormatSpec, k: int) -> npt.NDArray[np.float32]:
    """One tiled row per :data:`DIVIDE_SPLIT_AMAXES`: the amax, then 15 split elements."""
    rows = []
    for amax in DIVIDE_SPLIT_AMAXES:
        found = divide_split_elements(amax, fmt)
        if found.size == 0:  # a format with no split at this amax: the near-ties construction
            found = np.array([amax / 3.0, amax / 7.0, amax * 0.3], np.float32)
        picks = found[np.linspace(0, found.size - 1, _SUB - 1).round().astype(np.intp)]
        signs = np.where(np.arange(_SUB - 1) % 2, -1.0, 1.0)
        rows.append([amax, *(picks * signs).tolist()])
    return _tile(rows, k)


def scheme_population(
    element: str | FormatSpec, seed: int, k: int = 256
) -> list[tuple[str, npt.NDArray[np.float32]]]:
    """The labelled cases of :func:`case_labels` for element format ``element``.

    Raises:
        ValueError: unless ``k`` is a positive multiple of 128.
    """
    if k <= 0 or k % 128:
        raise ValueError(f"K must be a positive multiple of 128, got {k}")
    fmt = get_format(element)
    rng = np.random.default_rng(seed)
    top = float(fmt.max)
    mags = [float(fmt.magnitude_value(i)) for i in range(fmt.max_code + 1)]
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(mags)]
    cases: list[tuple[str, npt.NDArray[np.float32]]] = []
    decades = rng.choice([1e-6, 1e-3, 1.0, 1e2, 1e4, 1e6], (8, 1))
    cases.append(("random", (rng.standard_normal((8, k)) * decades).astype(np.float32)))
    tie_rows = []
    for p in (-20, -3, 0, 4, 30):
        picks = rng.choice(mids, _SUB - 1)
        signs = rng.choice([-1.0, 1.0], _SUB - 1)
        tie_rows.append([top * 2.0**p, *(picks * signs * 2.0**p).tolist()])
    cases.append(("ties", _tile(tie_rows, k)))
    near_rows = []
    for c in (1.1, 3.0 / 7.0, 0.3, 5.9, 1e-3 / 3.0, 77.7):
        amax = np.float32(top * c)
        s = amax / np.float32(top)
        x0 = (np.array(rng.choice(mids, 5), np.float32) * s).astype(np.float32)
        trio = np.concatenate([x0, np.nextafter(x0, np.float32(0)), np.nextafter(x0, amax)])
        near_rows.append([float(amax), *(trio * rng.choice([-1, 1], 15)).tolist()])
    cases.append(("near-ties", _tile(near_rows, k)))
    anchors = [2.0**j for j in (-126, -100, -40, -10, -1, 0, 1, 8, 9, 20, 100, 126)]
    anchors += [top * 2.0**j for j in (-30, -1, 0, 1, 30)]
    near = np.array(anchors, np.float32)
    amaxes = np.concatenate(
        [near, np.nextafter(near, np.float32(0)), np.nextafter(near, np.float32(np.inf))]
    )
    cases.append(("pow2-amax", _with_amax(amaxes.astype(np.float64).tolist(), rng, k)))
    cases.append(("zero", np.zeros((2, k), np.float32)))
    for label, special in (("nan", np.nan), ("neg-nan", -np.nan), ("inf", np.inf)):
        base = (rng.standard_normal((2, k)) * 3.0).astype(np.float32)
        base[:, 5 :: _SUB * 4] = special
        cases.append((label, base))
    sub = rng.uniform(-1.0, 1.0, (2, k)) * np.float32(1e-39)
    cases.append(("subnormal", sub.astype(np.float32)))
    at_max = rng.uniform(-top, top, (2, k)).astype(np.float32)
    at_max[:, ::_SUB] = np.float32(top)
    cases.append(("at-max", at_max))
    cases.append(("negative", -np.abs(rng.standard_normal((2, k))).astype(np.float32)))
    # A step of 2^(1/32) (K = 256, GQ's), flatter for long rows so the top stays below
    # 2^110 and float32; each step still beats the 1.01 jitter, so every row rises.
    step = min(1.0 / 32.0, 100.0 / k)
    rising = np.exp2(np.arange(k) * step) * rng.uniform(1.0, 1.01, (4, k))
    rising *= np.array([[1e-4], [0.3], [7.0], [1e3]]) * rng.choice([-1.0, 1.0], (4, k))
    cases.append(("amax-last", rising.astype(np.float32)))
    floors = [7.5e-16, 3.3e-14, 9.1e-13, 2.7e-12, 6.1e-11]  # under 1e-12, and under 1e-10
    cases.append(("below-floor", _with_amax(floors, rng, k)))
    if fmt.name == "e2m1fn":
        cases.append((_NVFP4_SPLIT, _nvfp4_split_rows(rng, k)))
        cases.append((_NVFP4_FUSED_SPLIT, _nvfp4_fused_split_rows(rng, k)))
    else:
        cases.append((_NAN_LANE, _nan_lane_rows(rng, k)))
        cases.append((_DIVIDE_SPLIT, _divide_split_rows(fmt, k)))
        for bits in E8M0_LOG2_SPLIT_AMAX_BITS:
            amaxes = np.array(bits, np.uint32).view(np.float32).astype(np.float64)
            cases.append((_LOG2_SPLIT, _with_amax(amaxes.tolist(), rng, k)))
    return cases
