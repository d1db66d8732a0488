"""``infer_positions``: every output's tree, its classes, their model run, and a verdict.

The verdict is one of:

* ``reproduced``: every position's counts fit a tree, re-asked probes and a
  repeated call agree, and every output of every class equals its model's
  bits on fresh seeded operands;
* ``not-fixed``: the kernel has no fixed float32 order, with the evidence:
  positions whose counts fit no tree, answers that change when asked again,
  two calls on the same operands that differ, or models that miss outputs
  (the order then depends on the operand values, or the adds are not float32);
* ``not-checked``: every position has a tree, but some tree has a fused node,
  which has no float32 model to run.

The record carries the host facts the order may depend on
(:func:`~fp8lab.order.host.host_facts`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fp8lab.order.grid import GridProbe
from fp8lab.order.host import host_facts
from fp8lab.order.positions import Position, PositionClass, classify_positions
from fp8lab.order.probe import F32MatmulProbe, Fp8MatmulProbe, SumProbe
from fp8lab.order.reproduce import Reproduction, reproduce
from fp8lab.order.sizing import unit_chunks
from fp8lab.order.verdict import failed_tests, judge

__all__ = ["VERDICTS", "PositionsRecord", "check_classes", "infer_positions", "judge"]

VERDICTS = ("reproduced", "not-fixed", "not-checked")


@dataclass(frozen=True)
class PositionsRecord:
    """What was inferred per output position, how it was checked, and on which host.

    Attributes:
        kernel: the kernel's name.
        probe: ``sum``, ``f32_matmul`` or ``fp8_matmul``.
        k: summands per output.
        shape: (M, N) of the product, (1, 1) for a sum.
        method: ``recursive`` or ``basic``.
        classes: the position classes, each position in one.
        calls: kernel calls made to infer and classify (each answers every output).
        check_calls: kernel calls made to re-ask probes and run the models.
        reproduction: the model run's counts.
        probe_changes: answers that changed when probe questions were asked again.
        verdict: one of :data:`VERDICTS`.
        evidence: one line per finding behind a verdict other than ``reproduced``.
        seconds: wall time of inference and checks.
        host: the host facts in force.
        sibling_rows: outputs the sibling test read (a row-batched inference only).
        sibling_nodes: fused nodes it settled.
        failed_tests: for ``not-fixed``, each failed test with one input that
            shows it (:func:`fp8lab.order.verdict.failed_tests`).
        first_call: what the warm-up found (:func:`warm_up`).
        out: the out dtype the kernel was probed with.
    """

    kernel: str
    probe: str
    k: int
    shape: tuple[int, int]
    method: str
    classes: tuple[PositionClass, ...]
    calls: int
    check_calls: int
    reproduction: Reproduction
    probe_changes: int
    verdict: str
    evidence: tuple[str, ...]
    seconds: float
    host: dict[str, Any] = field(default_factory=dict)
    sibling_rows: int = 0
    sibling_nodes: int = 0
    failed_tests: tuple[dict[str, Any], ...] = ()
    first_call: dict[str, Any] = field(default_factory=dict)
    out: str = "f32"

    @property
    def outputs_checked(self) -> int:
        """Outputs compared with their model, over every draw."""
        return self.reproduction.outputs_checked

    @property
    def outputs_reproduced(self) -> int:
        """Of those, outputs equal to their model bit for bit."""
        return self.reproduction.outputs_reproduced

    @property
    def uniform(self) -> PositionClass | None:
        """The one class when every position follows one tree, else None."""
        return self.classes[0] if len(self.classes) == 1 else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with ``position_classes``, the counts, the verdict and the host.

        ``family`` and ``tree`` are those every position shares (null when the
        classes differ or no tree fits).
        """
        rep = self.reproduction
        one = self.uniform
        tree = None if one is None or one.tree is None else one.tree.to_json()
        return {
            "kernel": self.kernel,
            "probe": self.probe,
            "k": self.k,
            "shape": list(self.shape),
            "method": self.method,
            "family": None if one is None else one.family,
            "tree": tree,
            "positions": sum(len(c.outputs) for c in self.classes),
            "position_classes": [c.to_json() for c in self.classes],
            "calls": self.calls,
            "check_calls": self.check_calls,
            "outputs_checked": rep.outputs_checked,
            "outputs_reproduced": rep.outputs_reproduced,
            "outputs_unchecked": rep.outputs_unchecked,
            "draws": rep.draws,
            "repeat_differs": rep.repeat_differs,
            "probe_changes": self.probe_changes,
            "verdict": self.verdict,
            "evidence": list(self.evidence),
            "failed_tests": list(self.failed_tests),
            "output_rounding": rep.output_rounding,
            "out": self.out,
            "first_call": self.first_call,
            "seconds": self.seconds,
            "sibling_rows": self.sibling_rows,
            "sibling_nodes": self.sibling_nodes,
            "host": self.host,
        }


def _probe_changes(
    grid: GridProbe, classes: Sequence[PositionClass], seed: int, ask: int
) -> tuple[int, dict[str, Any]]:
    """Answers at the classified positions that differ when a seeded sample is asked again.

    The first question asked (the kernel's first call) is always in the
    sample. Returns the count and the first change (``{"question", "output",
    "count", "first"}``; empty when none).
    """
    again = GridProbe(grid.probe)
    questions = list(grid.answers)
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(questions), size=min(ask, len(questions)), replace=False)
    where = [p for c in classes for p in c.outputs]
    rows, cols = np.array([p[0] for p in where]), np.array([p[1] for p in where])
    changed, first = 0, dict[str, Any]()
    for q in sorted({0, *(int(i) for i in picked)} if questions else ()):
        question = questions[q]
        moved = again.answer(question)[rows, cols] != grid.answers[question][rows, cols]
        changed += int(np.sum(moved))
        if moved.any() and not first:
            kind, items = question
            words = f"{kind} ({', '.join(str(i) for i, _ in items)})" if kind == "pair" else kind
            at = int(np.flatnonzero(moved)[0])
            first = {"question": words, "output": [int(rows[at]), int(cols[at])], "first": q == 0}
    grid.calls += again.calls
    return changed, {**first, "count": changed} if first else {}


def warm_up(grid: GridProbe, warmup: int) -> dict[str, Any]:
    """Call the kernel ``warmup`` times on the first probe's operands, then once more.

    Returns ``{"warmup", "calls", "differs"}`` (outputs whose bits differ
    between the first and the last call), with ``finding`` in words when some do: a
    first-call effect, reported by name and kept out of every tree.
    """
    found: dict[str, Any] = {"warmup": warmup, "differs": 0}
    if warmup < 1:
        return found
    k = grid.probe.k
    operands = grid.pair_operands(0, 1, unit_chunks(k, 0, 1, None)[0]) if k >= 2 else None
    if operands is None:
        return found
    first = grid.call(*operands)
    for _ in range(warmup):
        last = grid.call(*operands)
    found["calls"] = warmup + 1  # apart from the calls that infer and check
    differs = int(np.sum(first.view(np.uint32) != last.view(np.uint32)))
    if differs:
        found["differs"] = differs
        found["finding"] = (
            f"the first call differs from call {warmup + 1} on the same inputs (probe pair"
            f" (0, 1)) at {differs} outputs; the trees are from the calls after it"
        )
    return found


def check_classes(
    grid: GridProbe,
    record: dict[str, Any],
    classes: Sequence[PositionClass],
    seed: int,
    draws: int = 2,
    reask: int = 8,
) -> PositionsRecord:
    """Re-ask, run the models, judge and file ``classes`` (``record``: the other fields).

    Raises:
        KernelFaultError: when the kernel raises.
    """
    calls = grid.calls
    changes, changed = _probe_changes(grid, classes, seed, reask)
    rep = reproduce(grid, classes, seed, draws)
    verdict, evidence = judge(classes, rep, changes)
    failed = failed_tests(classes, rep, changed, seed) if verdict == "not-fixed" else []
    return PositionsRecord(
        classes=tuple(classes),
        check_calls=grid.calls - calls + rep.calls,
        reproduction=rep,
        probe_changes=changes,
        verdict=verdict,
        evidence=evidence,
        failed_tests=tuple(failed),
        **record,
    )


def infer_positions(
    probe: F32MatmulProbe | Fp8MatmulProbe | SumProbe,
    kernel: str,
    positions: Sequence[Position] | None = None,
    *,
    method: str = "recursive",
    siblings: bool = True,
    seed: int = 0,
    draws: int = 2,
    reask: int = 8,
    host: dict[str, Any] | None = None,
    warmup: int = 1,
) -> PositionsRecord:
    """Infer, classify and check the tree of every output in ``positions`` (default: all).

    ``warmup`` calls on the first probe's operands come first
    (:func:`warm_up`); with none, a first answer that changes when asked
    again fails the ``first-call`` test.

    Raises:
        ValueError: for an unknown method or no position.
        KernelFaultError: when the kernel raises.
    """
    t0 = time.perf_counter()
    grid = GridProbe(probe)
    m, n = grid.shape
    asked = positions if positions is not None else [(r, c) for r in range(m) for c in range(n)]
    first_call = warm_up(grid, warmup)
    classes = classify_positions(grid, asked, method, siblings)
    fields = {
        "kernel": kernel,
        "probe": probe.kind,
        "k": probe.k,
        "shape": (m, n),
        "method": method,
        "calls": grid.calls,
        "seconds": 0.0,
        "host": host_facts() if host is None else host,
        "first_call": first_call,
        "out": getattr(probe, "out", "f32"),
    }
    rec = check_classes(grid, fields, classes, seed, draws, reask)
    return dataclasses.replace(rec, seconds=time.perf_counter() - t0)
