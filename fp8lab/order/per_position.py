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
            "seconds": self.seconds,
            "sibling_rows": self.sibling_rows,
            "sibling_nodes": self.sibling_nodes,
            "host": self.host,
        }


def judge(
    classes: Sequence[PositionClass], rep: Reproduction, probe_changes: int
) -> tuple[str, tuple[str, ...]]:
    """The verdict and its evidence lines from the classes and the checks."""
    lines = [f"{len(c.outputs)} outputs fit no tree: {c.error}" for c in classes if c.error]
    if probe_changes:
        lines.append(f"asked again, the probes changed {probe_changes} answers")
    if rep.repeat_differs:
        lines.append(f"two calls on the same operands differ at {rep.repeat_differs} outputs")
    missed = rep.outputs_checked - rep.outputs_reproduced
    if missed:
        lines.append(
            f"the inferred trees reproduce {rep.outputs_reproduced} of {rep.outputs_checked}"
            " outputs: the order depends on the operand values, or the adds are not float32"
        )
    if lines:
        return "not-fixed", tuple(lines)
    if rep.outputs_unchecked or not rep.outputs_checked:
        return "not-checked", (
            f"{rep.outputs_unchecked} outputs follow a tree with a fused node:"
            " no float32 model to run",
        )
    return "reproduced", ()


def _probe_changes(grid: GridProbe, classes: Sequence[PositionClass], seed: int, ask: int) -> int:
    """Answers at the classified positions that differ when a seeded sample is asked again."""
    again = GridProbe(grid.probe)
    questions = list(grid.answers)
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(questions), size=min(ask, len(questions)), replace=False)
    where = [p for c in classes for p in c.outputs]
    rows, cols = np.array([p[0] for p in where]), np.array([p[1] for p in where])
    changed = 0
    for q in sorted(int(i) for i in picked):
        question = questions[q]
        changed += int(
            np.sum(again.answer(question)[rows, cols] != grid.answers[question][rows, cols])
        )
    grid.calls += again.calls
    return changed


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
    changes = _probe_changes(grid, classes, seed, reask)
    rep = reproduce(grid, classes, seed, draws)
    verdict, evidence = judge(classes, rep, changes)
    return PositionsRecord(
        classes=tuple(classes),
        check_calls=grid.calls - calls + rep.calls,
        reproduction=rep,
        probe_changes=changes,
        verdict=verdict,
        evidence=evidence,
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
) -> PositionsRecord:
    """Infer, classify and check the tree of every output in ``positions`` (default: all).

    Raises:
        ValueError: for an unknown method or no position.
        KernelFaultError: when the kernel raises.
    """
    t0 = time.perf_counter()
    grid = GridProbe(probe)
    m, n = grid.shape
    asked = positions if positions is not None else [(r, c) for r in range(m) for c in range(n)]
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
    }
    rec = check_classes(grid, fields, classes, seed, draws, reask)
    return dataclasses.replace(rec, seconds=time.perf_counter() - t0)
