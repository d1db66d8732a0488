"""Run gates against mutants and record verdicts and kill margins (Cosmic Ray style).

A mutant is KILLED when a gate it is run under FAILs, SURVIVED when every
such gate PASSes, and INCOMPETENT when it could not be built or loaded. The
kill margin is the number of failed assertions; below ``threshold`` it is
flagged thin. A case count that differs from the restored kernel's is
reported, as the seed noted for M0.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fp8lab.gates import GateResult, GateStatus
from fp8lab.gates.records import MutantVerdict
from fp8lab.specs.gates import GATES

__all__ = ["GateRunner", "MutantResult", "MutantVerdict", "judge", "require_green"]

GateRunner = Callable[[Any], GateResult]


@dataclass(frozen=True)
class MutantResult:
    """One mutant under the selected gates."""

    id: str
    description: str
    target: str
    built: bool
    build_error: str
    verdict: MutantVerdict
    cases: int
    assertions: int
    failed_assertions: int
    passed_assertions: int
    moved_words: int
    killed_by: tuple[str, ...]
    thin: bool
    case_count_changed: bool
    diff: str = ""

    @property
    def margin(self) -> int:
        """Failed assertions: how far from surviving the mutant was."""
        return self.failed_assertions

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the verdict as its string."""
        return {**asdict(self), "verdict": self.verdict.value, "margin": self.margin}

    def to_json(self) -> str:
        """Stable JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def _gates_for(target: str, gates: Mapping[str, GateRunner]) -> list[str]:
    """The gates among ``gates`` whose kernels are of kind ``target`` (the mutant's)."""
    return [g for g in gates if GATES[g].kind == target]


def require_green(
    label: str, target: str, built: Any, gates: Mapping[str, GateRunner]
) -> dict[str, int]:
    """Gate the unmutated kernels; return each applicable gate's case count per kernel.

    A kill means something only if the unmutated build passes: a kernel that
    already fails a gate would "kill" every mutant of its module.

    Raises:
        ValueError: if an unmutated kernel fails (or is PENDING under) a gate,
            or no gate applies to ``target``.
    """
    applicable = _gates_for(target, gates)
    if not applicable:
        raise ValueError(f"{label}: no gate among {list(gates)} checks a {target} kernel")
    kernels = built if isinstance(built, list) else [built]
    cases: dict[str, int] = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for g in applicable:
            for kernel in kernels:
                result = gates[g](kernel)
                if result.status is not GateStatus.PASS:
                    name = getattr(kernel, "name", type(kernel).__name__)
                    raise ValueError(
                        f"{label}: the unmutated kernel {name} is {result.status.value} under "
                        f"{g} ({result.reason}); no mutant of it can be judged"
                    )
                cases[g] = result.cases
    return cases


def judge(
    mutant_id: str,
    description: str,
    target: str,
    build: Callable[[], Any],
    gates: Mapping[str, GateRunner],
    baseline_cases: Mapping[str, int],
    *,
    threshold: int = 3,
    diff: str = "",
    baseline_is_total: bool = False,
) -> MutantResult:
    """Build one mutant (a kernel, or a list of kernels from one mutated module) and gate it.

    Every selected gate that applies to ``target`` runs on every kernel built.
    ``baseline_cases`` are each gate's cases on one unmutated kernel, or, with
    ``baseline_is_total``, on all the unmutated kernels the mutant's kernels
    stand for (ports gated under different schemes run different case counts).

    Raises:
        ValueError: if none of ``gates`` applies to ``target`` (nothing would run).
    """
    applicable = _gates_for(target, gates)
    if not applicable:
        raise ValueError(f"{mutant_id}: no gate among {list(gates)} checks a {target} kernel")
    try:
        built = build()
    except Exception as exc:  # noqa: BLE001 - any build failure is INCOMPETENT
        return MutantResult(
            mutant_id,
            description,
            target,
            False,
            f"{type(exc).__name__}: {exc}",
            MutantVerdict.INCOMPETENT,
            0,
            0,
            0,
            0,
            0,
            (),
            False,
            False,
            diff,
        )
    kernels = built if isinstance(built, list) else [built]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # a mutant's warnings are not verdicts
        results: list[GateResult] = [gates[g](k) for g in applicable for k in kernels]
    failed = sum(r.assertions_failed for r in results)
    killed_by = tuple(sorted({r.gate for r in results if r.status is GateStatus.FAIL}))
    cases = sum(r.cases for r in results)
    verdict = MutantVerdict.KILLED if killed_by else MutantVerdict.SURVIVED
    return MutantResult(
        id=mutant_id,
        description=description,
        target=target,
        built=True,
        build_error="",
        verdict=verdict,
        cases=cases,
        assertions=sum(r.assertions for r in results),
        failed_assertions=failed,
        passed_assertions=sum(r.assertions - r.assertions_failed for r in results),
        moved_words=sum(r.mismatches + r.nan_code_mismatches for r in results),
        killed_by=killed_by,
        thin=verdict is MutantVerdict.KILLED and failed < threshold,
        case_count_changed=cases
        != (1 if baseline_is_total else len(kernels)) * sum(baseline_cases[g] for g in applicable),
        diff=diff,
    )
