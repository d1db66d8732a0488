"""The mutation harness (``mutate``) under hostile mutants.

A mutant that writes into its input cannot change a verdict: the gates hand
it private read-only copies. A mutant that raises or exits is KILLED with the
gates' FAIL, never a crash of the harness or a false status.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels import FunctionKernel, quant_static
from fp8lab.mutants.harness import judge
from fp8lab.mutants.runner import gate_runners

RUNNERS = gate_runners(["G1"])
BASELINE = {"G1": 16}


def _judged(func: Any) -> Any:
    return judge("t", "test", "quant", lambda: FunctionKernel("t", func), RUNNERS, BASELINE)


def _scribbles_then_quantizes(x: np.ndarray, scale: Any) -> np.ndarray:
    codes = quant_static(x, scale)
    x.setflags(write=True)  # only a private copy can be made writable
    x[...] = 0
    return codes


def _clips_in_place_then_quantizes(x: np.ndarray, scale: Any) -> np.ndarray:
    x.setflags(write=True)
    np.clip(x, -1, 1, out=x)
    return quant_static(x, scale)


def test_a_mutant_writing_into_its_input_after_the_call_changes_no_verdict() -> None:
    clean, scribbler = _judged(quant_static), _judged(_scribbles_then_quantizes)
    assert clean.verdict is scribbler.verdict is MutantVerdict.SURVIVED
    assert scribbler.failed_assertions == 0 and scribbler.assertions == clean.assertions


def test_a_mutant_that_corrupts_its_input_first_is_killed() -> None:
    result = _judged(_clips_in_place_then_quantizes)
    assert result.verdict is MutantVerdict.KILLED and result.failed_assertions > 0


@pytest.mark.parametrize("fault", [RuntimeError("boom"), SystemExit(0), SystemExit(3)])
def test_a_mutant_that_raises_or_exits_is_killed_not_a_crash(fault: BaseException) -> None:
    def raising(x: np.ndarray, scale: Any) -> np.ndarray:
        raise fault

    result = _judged(raising)
    assert result.verdict is MutantVerdict.KILLED and result.failed_assertions == result.assertions
