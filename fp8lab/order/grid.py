"""Ask one probe question at every output of a matmul in one call.

A pair question (i, j) puts the masks of :mod:`fp8lab.order.probe` in
every row of A (f32) or of both operands (fp8 codes), so output (r, c)
counts the units outside the subtree joining i and j *in the tree that
output follows*: one call answers L(i, j) at all MxN positions. A value
question (the sibling test's sparse vectors) is placed the same way and
answers with the output bits of every position. :class:`PositionView`
then serves one position's answers to the ordinary tree builder, asking
the kernel only for questions no earlier position asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.order.probe import (
    FP8_UNIT_EXP,
    F32MatmulProbe,
    Fp8MatmulProbe,
    ProbeError,
    Row,
    SumProbe,
    e4m3_products,
    f32_row,
)
from fp8lab.order.sizing import F32_SIZES, FP8_SIZES, ProbeSize, unit_chunks
from fp8lab.runtime.guard import call_kernel
from fp8lab.specs.formats import FORMATS

__all__ = ["GridProbe", "PositionView", "Question"]

Question = tuple[str, tuple[tuple[int, float], ...]]  # ("pair", ((i, 0), (j, 0))) or ("sum", row)
Ints = npt.NDArray[np.int64]


def probe_size(probe: F32MatmulProbe | Fp8MatmulProbe | SumProbe) -> ProbeSize:
    """The probe values for ``probe``'s output type (:mod:`fp8lab.order.sizing`)."""
    if isinstance(probe, Fp8MatmulProbe):
        return FP8_SIZES[probe.out]
    return F32_SIZES[getattr(probe, "out", "f32")]


def _rows(row: np.ndarray, count: int) -> np.ndarray:
    """``count`` copies of ``row``, one per row of a new C-contiguous array."""
    return np.repeat(row[np.newaxis, :], count, axis=0)


@cache
def _code(value: float) -> int:
    """The positive e4m3fn code of ``value`` (a search of the codes, made once per value)."""
    fmt = FORMATS["e4m3fn"]
    return next(c for c in range(fmt.max_code + 1) if float(fmt.exact_value(c)) == value)


@dataclass
class GridProbe:
    """Every output's answer to each question, one kernel call per question (cached).

    Attributes:
        probe: the single-output probe whose kernel, K and shape are used.
        calls: kernel calls made.
        answers: question -> [M, N] answers (L, or -1 where the output is not
            a count of units; output bits for value questions).
    """

    probe: F32MatmulProbe | Fp8MatmulProbe | SumProbe
    calls: int = 0
    answers: dict[Question, Ints] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        """(M, N) of the probed product; (1, 1) for a sum."""
        return (getattr(self.probe, "m", 1), getattr(self.probe, "n", 1))

    def answer(self, question: Question) -> Ints:
        """The [M, N] answers to one question, asking the kernel once if new."""
        if question not in self.answers:
            kind, items = question
            self.calls += 1
            if kind == "pair":
                (i, _), (j, _) = items
                self.answers[question] = self._pair(i, j)
            else:
                self.answers[question] = self._bits(dict(items))
        return self.answers[question]

    def call(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The kernel's [M,N] output on ``a`` and ``b`` as float32 (not counted)."""
        return self._call(a, b)

    def _call(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        p = self.probe
        if isinstance(p, SumProbe):
            got = np.asarray(call_kernel(p.func, a[0]), np.float32).reshape(1, 1)
        elif isinstance(p, F32MatmulProbe):
            got = np.asarray(call_kernel(p.func, a, b))
        else:
            got = np.asarray(call_kernel(p.kernel.matmul, a, b, 1.0, 1.0, p.out))
        if got.shape != self.shape:
            raise ProbeError(f"want a {list(self.shape)} output, got shape {got.shape}")
        return np.ascontiguousarray(got, np.float32)

    def pair_operands(
        self, i: int, j: int, units: Sequence[int] | Ints
    ) -> tuple[np.ndarray, np.ndarray]:
        """The operands of question (i, j) with units at ``units`` (0 elsewhere), every row."""
        k = self.probe.k
        m, n = self.shape
        size = probe_size(self.probe)
        at = np.asarray(units, np.int64)
        if isinstance(self.probe, Fp8MatmulProbe):
            fmt = FORMATS["e4m3fn"]
            mask = _code(size.mask)
            a_row = np.zeros(k, np.uint8)
            a_row[at] = 1  # code 1: the smallest subnormal, 2**-9
            b_row = a_row.copy()
            a_row[i], a_row[j] = mask, fmt.sign_bit | mask
            b_row[i], b_row[j] = mask, mask
            return _rows(a_row, m), _rows(b_row, n)
        a_row = np.zeros(k, np.float32)
        a_row[at] = size.unit
        a_row[i], a_row[j] = size.mask, -size.mask
        return _rows(a_row, m), np.ones((n, k), np.float32)

    def _pair(self, i: int, j: int) -> Ints:
        k = self.probe.k
        if not (0 <= i < k and 0 <= j < k and i != j):
            raise ValueError(f"want two distinct summands in 0..{k - 1}, got {i} and {j}")
        size = probe_size(self.probe)
        unit = 2.0**FP8_UNIT_EXP if isinstance(self.probe, Fp8MatmulProbe) else size.unit
        total = np.zeros(self.shape, np.float64)
        ok = np.ones(self.shape, np.bool_)
        for n, chunk in enumerate(unit_chunks(k, i, j, size.cap)):
            self.calls += n > 0  # a question asked in several calls counts each
            units = self._call(*self.pair_operands(i, j, chunk)).astype(np.float64) / unit
            with np.errstate(invalid="ignore"):
                ok &= np.isfinite(units) & (units == np.round(units))
                ok &= (units >= 0) & (units <= len(chunk))
            total += np.where(ok, units, 0)
        ok &= total <= k - 2
        return np.where(ok, k - total.round(), -1).astype(np.int64)

    def _bits(self, row: Row) -> Ints:
        k = self.probe.k
        m, n = self.shape
        if isinstance(self.probe, Fp8MatmulProbe):
            table = e4m3_products()
            a = np.zeros((m, k), np.uint8)
            b = np.zeros((n, k), np.uint8)
            for pos, v in row.items():
                if v not in table or not 0 <= pos < k:
                    raise ValueError(f"summand {pos}: {v!r} is no e4m3fn product")
                a[:, pos], b[:, pos] = table[v]
        else:
            a = np.broadcast_to(f32_row(k, row), (m, k)).copy()
            b = np.ones((n, k), np.float32)
        return self._call(a, b).view(np.uint32).astype(np.int64)


@dataclass
class PositionView:
    """An :class:`~fp8lab.order.probe.LcaProbe` for one output, served by a grid.

    ``asked`` lists the questions this view was asked, in order: with their
    answers they determine the tree the builder returns.
    """

    grid: GridProbe
    position: tuple[int, int]
    asked: list[Question] = field(default_factory=list)

    def __post_init__(self) -> None:
        p = self.grid.probe
        self.k, self.kind = p.k, p.kind
        self.high_exp, self.low_exp = p.high_exp, p.low_exp
        self.calls = self.queries = 0

    def _read(self, question: Question) -> int:
        value = int(self.grid.answer(question)[self.position])
        self.asked.append(question)  # only questions the grid could ask
        self.calls += 1
        self.queries += 1
        return value

    def lca_sizes(self, i: int, js: Sequence[int]) -> list[int]:
        """L(i, j) at this output for each j."""
        return self.pair_sizes([(i, j) for j in js])

    def pair_sizes(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """L(i, j) at this output for each pair.

        Raises:
            ProbeError: where the output is not a count of units.
        """
        out = []
        for i, j in pairs:
            value = self._read(("pair", ((i, 0), (j, 0))))
            if value < 0:
                raise ProbeError(
                    f"probe (i={i}, j={j}) at output {list(self.position)}: not a count of"
                    f" units in [0, {self.k - 2}] (the kernel is not an order-only sum there)"
                )
            out.append(value)
        return out

    def sums(self, rows: Sequence[Row]) -> list[int]:
        """The output bits at this position for each sparse summand vector."""
        return [self._read(("sum", tuple(sorted(row.items())))) for row in rows]
