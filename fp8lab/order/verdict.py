"""The verdict of an order run, the tests behind it, and one input that shows each failure.

A ``not-fixed`` verdict names which of its tests failed (``failed_tests``),
each with one input that shows it, so the failure can be asked again:

* ``fits-a-tree``: an output whose counts fit no summation tree (the probe
  question and the output);
* ``answers-repeat``: a probe question that answered otherwise when asked
  again (the question and an output where it changed);
* ``first-call``: with no warm-up, the first call's answer changed when asked
  again (a first-call effect: warm the kernel up with ``warmup``);
* ``calls-repeat``: two calls on the same seeded operands that differ;
* ``models-reproduce``: a model that misses an output, under every output
  rounding the out type allows (the draw, the output, both bits).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fp8lab.order.positions import PositionClass
from fp8lab.order.reproduce import Reproduction

__all__ = ["TESTS", "failed_tests", "judge"]

TESTS = ("fits-a-tree", "answers-repeat", "first-call", "calls-repeat", "models-reproduce")
_AT = re.compile(r"probe \(i=(\d+), j=(\d+)\)(?: at output \[(\d+), (\d+)\])?")


def _question(error: str, cls: PositionClass) -> dict[str, Any]:
    found = _AT.search(error)
    where = list(cls.outputs[0])
    if found is None:
        return {"output": where}
    i, j, r, c = found.groups()
    return {"question": f"pair ({i}, {j})", "output": [int(r), int(c)] if r else where}


def failed_tests(
    classes: Sequence[PositionClass],
    rep: Reproduction,
    changed: dict[str, Any],
    seed: int,
) -> list[dict[str, Any]]:
    """One entry per failed test: ``{"test", "finding", "input"}`` (see the module docstring).

    ``changed`` is the first re-asked question whose answer changed
    (``{"question", "output", "count", "first"}``; empty when none did).
    """
    out: list[dict[str, Any]] = []
    for cls in classes:
        if cls.error:
            out.append({"test": "fits-a-tree", "finding": f"{len(cls.outputs)} outputs fit no tree",
                        "input": _question(cls.error, cls)})  # fmt: skip
            break
    if changed:
        test = "first-call" if changed.get("first") else "answers-repeat"
        finding = (
            "the first call's answer changed when asked again (a first-call effect)"
            if test == "first-call"
            else f"asked again, the probes changed {changed['count']} answers"
        )
        where = {"question": changed["question"], "output": changed["output"]}
        out.append({"test": test, "finding": finding, "input": where})
    if rep.repeat_differs:
        out.append({"test": "calls-repeat",
                    "finding": f"two calls on the same operands differ at {rep.repeat_differs}"
                               " outputs",
                    "input": {"seed": seed, **rep.first_repeat}})  # fmt: skip
    if rep.outputs_checked != rep.outputs_reproduced:
        out.append({"test": "models-reproduce",
                    "finding": f"the inferred trees reproduce {rep.outputs_reproduced} of "
                               f"{rep.outputs_checked} outputs under every output rounding",
                    "input": {"seed": seed, **rep.first_miss}})  # fmt: skip
    return out


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
            " (nor float32 rounded once or per add to the output type)"
        )
    if lines:
        return "not-fixed", tuple(lines)
    if rep.outputs_unchecked or not rep.outputs_checked:
        return "not-checked", (
            f"{rep.outputs_unchecked} outputs follow a tree with a fused node:"
            " no float32 model to run",
        )
    return "reproduced", ()
