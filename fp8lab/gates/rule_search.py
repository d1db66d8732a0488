"""A search over a rule's axes that grows with their number, not with their product.

:func:`descend` moves from a start one group of axes at a time to the values
that leave the fewest mismatching words (a group's axes jointly: a rule that
refuses a combination is skipped), and repeats until a pass changes nothing.
Each group's values cost one evaluation each per pass, so a search of ``g``
groups of ``v`` values costs about ``passes * g * v`` evaluations where the
product would cost ``v ** g``. :func:`tied_values` lists, at the result, the
values of each group that do as well, the axes the evaluations cannot tell
apart. Every evaluation is kept by declaration, with its mismatches per call,
so a call no evaluated declaration explains can be named.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Evaluations", "descend", "tied_values"]

Group = Mapping[str, Sequence[object]]
_UNNAMED = ("name", "source", "element_source")


def _key(rule: Any) -> tuple[object, ...]:
    return tuple(getattr(rule, f.name) for f in dataclasses.fields(rule) if f.name not in _UNNAMED)


class Evaluations:
    """Each declaration's mismatching words per call, evaluated once.

    Args:
        evaluate: a rule -> its mismatching words, one count per call.
        calls: how many calls each evaluation counts.
        reads: the fields ``evaluate`` reads (None: every field but the name and
            sources); two rules alike on them are evaluated once.
    """

    def __init__(
        self,
        evaluate: Callable[[Any], npt.NDArray[np.int64]],
        calls: int,
        reads: Sequence[str] | None = None,
    ) -> None:
        self._evaluate = evaluate
        self._reads = reads
        self._seen: dict[tuple[object, ...], npt.NDArray[np.int64]] = {}
        self.best_per_call = np.full(calls, np.iinfo(np.int64).max, np.int64)

    def __call__(self, rule: Any) -> npt.NDArray[np.int64]:
        """``rule``'s mismatching words per call."""
        key = _key(rule) if self._reads is None else tuple(getattr(rule, f) for f in self._reads)
        found = self._seen.get(key)
        if found is None:
            found = np.asarray(self._evaluate(rule), np.int64)
            self._seen[key] = found
            np.minimum(self.best_per_call, found, out=self.best_per_call)
        return found

    def total(self, rule: Any) -> int:
        """``rule``'s mismatching words over every call."""
        return int(self(rule).sum())

    @property
    def count(self) -> int:
        """How many declarations were evaluated."""
        return len(self._seen)

    def first_unexplained(self) -> int | None:
        """The first call on which every evaluated declaration mismatches, or None."""
        bad = np.flatnonzero(self.best_per_call > 0)
        return int(bad[0]) if bad.size else None


def _moves(rule: Any, group: Group) -> Iterable[Any]:
    """``rule`` with each combination of ``group``'s values that the rule accepts."""
    axes = list(group)
    for combo in itertools.product(*(group[a] for a in axes)):
        values = dict(zip(axes, combo, strict=True))
        if all(getattr(rule, a) == v for a, v in values.items()):
            continue
        try:
            yield dataclasses.replace(rule, **values)
        except ValueError:  # no rule: the combination is refused
            continue


def descend(start: Any, groups: Sequence[Group], scores: Evaluations, passes: int = 4) -> Any:
    """From ``start``, one group at a time to the fewest mismatches, until a pass changes nothing.

    A move must lower the total strictly, so the result keeps the start's
    value on every axis the evaluations cannot tell apart.
    """
    current, best = start, scores.total(start)
    for _ in range(passes):
        moved = False
        for group in groups:
            if best == 0:
                return current
            for cand in _moves(current, group):
                total = scores.total(cand)
                if total < best:
                    current, best, moved = cand, total, True
        if not moved:
            break
    return current


def tied_values(rule: Any, groups: Sequence[Group], scores: Evaluations) -> list[list[Any]]:
    """Per group, ``rule`` and its moves in that group that leave as few mismatches as it."""
    total = scores.total(rule)
    return [
        [rule, *(c for c in _moves(rule, group) if scores.total(c) == total)] for group in groups
    ]
