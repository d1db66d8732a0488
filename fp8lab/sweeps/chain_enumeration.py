"""Every (gate, up) pair where two silu-mul recipes give different fp8 bytes.

SiLU·mul with a static per-tensor scale is elementwise: output byte ``j`` is a
function of the bf16 pair ``(g, u) = (x[j], x[d + j])`` alone (reference:
:func:`fp8lab.refs.chain_ref.reference_chain`, steps ``silu``, ``mul_up``,
``quant``). So the 2**32 pairs at one scale are the complete domain, and
:func:`enumerate_silu_mul` counts every differing pair exactly, with a coverage
proof (:func:`fp8lab.sweeps.coverage.covered_ranges`) built from the rows that ran:
pair ``(g, u)`` has index ``g << 16 | u``; each row ``g`` handled (below)
stands for ``[g << 16, (g + 1) << 16)``; ``examined`` is ``2**32`` only if
those pieces tile ``[0, 2**32)`` exactly once.

Why the evaluation is exact and why the shortcut is sound:

* Silu values: each recipe's ``silu`` step is evaluated once per gate by
  ``reference_chain`` itself (all 65,536 gates: one table per silu step
  declaration, kept for the process; the correctly rounded exp makes it slow).
* Tail: ``p = round(fl32(s * u))`` (``mul_up``'s ``rounds``) and the code of
  ``fl32(p * fl32(1/fl32(scale)))`` by the scan encoder (SATFINITE, NaN -> the
  step's ``nan_code``), as the reference computes them. Where ``mul_up``
  stores to bf16, ``p`` is a bf16 value, so its code is a table over the
  65,536 bf16 patterns; ``p``'s bits are the RNE rounding of the float32
  product's bits, with NaN products sent to a NaN pattern explicitly.
* Shortcut: if both recipes declare the same ``mul_up`` and ``quant``
  roundings (``nan_code`` aside) and a gate's two silu values are bitwise
  equal (or both NaN, which every later step keeps NaN), the two tails compute
  the same pre-quant ``y`` for every ``u``; their bytes then differ exactly
  where ``y`` is NaN and the NaN codes differ. Such a row is counted from its
  NaN mask (or as 0 when the NaN codes agree); every other row is evaluated
  for all 65,536 ``u`` under both recipes.

Classes of a differing pair, from the two pre-quant values ``y``:
``nan-code`` (both NaN: the bytes differ only by the recipes' NaN codes),
``nan`` (exactly one is NaN), ``saturated`` (else, either is beyond 448, the
largest e4m3fn magnitude, so the encoder clamped it), ``finite`` (both in range).
``tests/sweeps/test_chain_enumeration.py`` checks rows against brute
``reference_chain`` evaluation, shortcut rows included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.specs.chain_recipe import Chain
from fp8lab.sweeps.coverage import covered_ranges
from fp8lab.sweeps.silu_mul_tables import (
    _ALL16,
    _ROW,
    _check_pair,
    _silu_values,
    _Tail,
    _tails,
    silu_table,
)

__all__ = [
    "CLASSES",
    "SiluMulEnumeration",
    "check_silu_mul_pair",
    "enumerate_silu_mul",
    "silu_mul_row_differences",
    "silu_table",
]

CLASSES = ("finite", "saturated", "nan", "nan-code")
ALL_PAIRS = 1 << 32
_MAX = np.float32(448.0)


def check_silu_mul_pair(a: str, b: str, scale: float) -> None:
    """Refuse what :func:`enumerate_silu_mul` cannot enumerate, before any work.

    Raises:
        ValueError: an unknown recipe, one that is not silu-mul (silu, mul_up,
            quant), unsupported roundings, or a scale that is not > 0 in float32.
    """
    _tails(*_check_pair(a, b), scale)


def _same_silu(sa: npt.NDArray[np.float32], sb: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Rows whose silu values are bitwise equal or both NaN (the shortcut's condition)."""
    same = (sa.view(np.uint32) == sb.view(np.uint32)) | (np.isnan(sa) & np.isnan(sb))
    return np.asarray(same, np.bool_)


# Test hook: tests/sweeps/test_chain_enumeration.py plants a wrong condition here.
SAME_SILU: Callable[[npt.NDArray[np.float32], npt.NDArray[np.float32]], npt.NDArray[np.bool_]] = (
    _same_silu
)


@dataclass
class _Rows:
    """One batch of gate rows: which ran how, and where the bytes differ.

    Only the rows in ``evaluated`` were computed; every other row of the batch
    is a shortcut row whose NaN codes agree, so none of its bytes differ.
    """

    g_bits: npt.NDArray[np.uint16]
    full: npt.NDArray[np.bool_]  # per row of g_bits: evaluated under both recipes
    evaluated: npt.NDArray[np.intp]  # ascending indices into g_bits
    diff: npt.NDArray[np.bool_]  # (len(evaluated), 65536)
    classes: npt.NDArray[np.uint8]  # index into CLASSES, meaningful where diff
    codes: tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]


def _classify(ya: npt.NDArray[np.float32], yb: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    na, nb = np.isnan(ya), np.isnan(yb)
    with np.errstate(invalid="ignore"):
        sat = (np.abs(ya) > _MAX) | (np.abs(yb) > _MAX)
    return np.select([na & nb, na | nb, sat], [3, 2, 1], 0).astype(np.uint8)


def _rows(
    ca: Chain,
    cb: Chain,
    tails: tuple[_Tail, _Tail],
    g_bits: npt.NDArray[np.uint16],
    *,
    codes: bool = True,
) -> _Rows:
    ta, tb = tails
    sa, sb = _silu_values(ca, g_bits), _silu_values(cb, g_bits)
    same_tail = ca.steps[1].rounds == cb.steps[1].rounds
    short = SAME_SILU(sa, sb) if same_tail else np.zeros(len(g_bits), np.bool_)
    full = ~short
    evaluated = np.flatnonzero(full | (short & (codes or ta.nan_code != tb.nan_code)))
    n = len(evaluated)
    diff = np.zeros((n, _ROW), np.bool_)
    classes = np.zeros((n, _ROW), np.uint8)
    codes_a = np.zeros((n, _ROW), np.uint8)
    codes_b = np.zeros((n, _ROW), np.uint8)
    sub_full = full[evaluated]
    rows = evaluated[sub_full]
    if rows.size:
        ka, kb = ta.key(sa[rows]), tb.key(sb[rows])
        qa, qb = ta.codes(ka), tb.codes(kb)
        d = qa != qb
        cls = np.zeros(d.shape, np.uint8)
        cls[d] = _classify(ta.y(ka[d]), tb.y(kb[d]))
        diff[sub_full], classes[sub_full], codes_a[sub_full], codes_b[sub_full] = d, cls, qa, qb
    rows = evaluated[~sub_full]
    if rows.size:
        ka = ta.key(sa[rows])
        nan = np.isnan(ta.y(ka))
        qa = ta.codes(ka)
        qb = np.where(nan, np.uint8(tb.nan_code), qa)
        diff[~sub_full] = nan & (ta.nan_code != tb.nan_code)
        classes[~sub_full] = np.where(nan, 3, 0).astype(np.uint8)  # both sides NaN
        codes_a[~sub_full], codes_b[~sub_full] = qa, qb
    return _Rows(g_bits, full, evaluated, diff, classes, (codes_a, codes_b))


def silu_mul_row_differences(
    a: str, b: str, scale: float, g_bits: npt.NDArray[np.uint16]
) -> tuple[
    npt.NDArray[np.bool_], npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]
]:
    """For each gate pattern, which of the 65,536 ``u`` give different bytes, both bytes, classes.

    The same evaluation (shortcut included) that :func:`enumerate_silu_mul` runs.

    Returns:
        ``(diff, codes_a, codes_b, classes)``, each of shape
        ``(len(g_bits), 65536)``, column = ``u``'s bf16 pattern; ``classes``
        indexes :data:`CLASSES` where ``diff``. A shortcut row's codes are the
        shared tail's, with NaN given each recipe's byte.

    Raises:
        ValueError: unknown recipe, not silu-mul, or a scale that is not > 0 in float32.
    """
    ca, cb = _check_pair(a, b)
    rows = _rows(ca, cb, _tails(ca, cb, scale), np.asarray(g_bits, np.uint16))
    return rows.diff, rows.codes[0], rows.codes[1], rows.classes  # codes=True: all evaluated


@dataclass(frozen=True)
class SiluMulEnumeration:
    """The complete set of differing (gate, up) pairs of two silu-mul recipes at one scale.

    ``examined`` pairs (2**32), tiled by ``covered`` (hex index ranges,
    ``g << 16 | u``); ``differ`` of them give different bytes, split by
    ``classes``; ``full_rows`` gates were evaluated under both recipes,
    ``shortcut_rows`` by the shortcut; ``first``: the first differing pairs of
    each class, ``{"g", "u", "a", "b", "class"}`` as hex bit patterns and bytes.
    """

    a: str
    b: str
    scale: float
    examined: int
    covered: list[list[str]]
    differ: int
    classes: dict[str, int]
    full_rows: int
    shortcut_rows: int
    first: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _gate_blocks(block: int) -> list[npt.NDArray[np.uint16]]:
    return [_ALL16[lo : lo + block] for lo in range(0, _ROW, block)]


def enumerate_silu_mul(
    a: str,
    b: str,
    scale: float,
    *,
    first: int = 8,
    block: int = 64,
    blocks: Callable[[int], list[npt.NDArray[np.uint16]]] = _gate_blocks,
) -> SiluMulEnumeration:
    """Count every (g, u) of the 2**32 bf16 pairs where ``a`` and ``b`` give different bytes.

    Args:
        a: a silu-mul recipe name.
        b: another (or the same) silu-mul recipe name.
        scale: the static per-tensor scale.
        first: how many differing pairs to sample per class, the first in
            ``(g, u)`` pattern order; listed class by class in :data:`CLASSES` order.
        block: gate rows per batch.
        blocks: the gate batches to run (a test drops one to see the proof fail).

    Raises:
        ValueError: as :func:`silu_mul_row_differences`.
        fp8lab.sweeps.coverage.CoverageError: if the rows that ran do not tile the 2**32 pairs.
    """
    ca, cb = _check_pair(a, b)
    tails = _tails(ca, cb, scale)
    for name in (a, b):
        silu_table(name)
    counts = [0] * len(CLASSES)
    full_rows = shortcut_rows = 0
    pieces: list[tuple[int, int]] = []
    sample: list[dict[str, str]] = []
    for g_bits in blocks(block):
        rows = _rows(ca, cb, tails, g_bits, codes=False)
        full_rows += int(rows.full.sum())
        shortcut_rows += int((~rows.full).sum())
        pieces += [(int(g) << 16, (int(g) + 1) << 16) for g in rows.g_bits]
        hist = np.bincount(rows.classes[rows.diff], minlength=len(CLASSES))
        counts = [c + int(h) for c, h in zip(counts, hist, strict=True)]
        for c, name in enumerate(CLASSES):
            taken = sum(f["class"] == name for f in sample)
            if taken < first and hist[c]:
                r, u = np.nonzero(rows.diff & (rows.classes == c))
                for i, j in zip(r[: first - taken], u[: first - taken], strict=True):
                    sample.append(
                        {
                            "g": f"{int(rows.g_bits[rows.evaluated[i]]):#06x}",
                            "u": f"{int(j):#06x}",
                            "a": f"{int(rows.codes[0][i, j]):#04x}",
                            "b": f"{int(rows.codes[1][i, j]):#04x}",
                            "class": name,
                        }
                    )
    covered = covered_ranges(pieces, 0, ALL_PAIRS)
    examined = sum(hi - lo for lo, hi in pieces)
    return SiluMulEnumeration(
        a=a,
        b=b,
        scale=scale,
        examined=examined,
        covered=covered,
        differ=sum(counts),
        classes=dict(zip(CLASSES, counts, strict=True)),
        full_rows=full_rows,
        shortcut_rows=shortcut_rows,
        first=sorted(sample, key=lambda f: (CLASSES.index(f["class"]), f["g"], f["u"])),
    )
