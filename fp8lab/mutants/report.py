"""The mutation report: catalogue before and after strengthening, source score, seed table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from fp8lab.gates.records import MutantVerdict
from fp8lab.mutants.catalogue import SEED_NOTES, SEED_TABLE
from fp8lab.mutants.equivalence import Recheck, recheck_equivalent, recheck_equivalents
from fp8lab.mutants.harness import MutantResult
from fp8lab.mutants.runner import (
    Equivalent,
    load_equivalents,
    run_catalogue,
    run_source,
    source_score,
)
from fp8lab.specs.gates import GATES

__all__ = ["MutationReport", "check_equivalent", "mutation_report"]


def check_equivalent(key: str, entry: Equivalent, *, exhaustive: bool = True) -> int:
    """Re-check one justified equivalent (:mod:`.equivalence`); return the inputs compared.

    Raises:
        AssertionError: if the mutant differs anywhere examined, cannot be built,
            or the entry is stale.
    """
    result = recheck_equivalent(key, entry, exhaustive=exhaustive)
    if not result.equivalent:
        raise AssertionError(f"{key}: not equivalent ({result.means}): {result.detail}")
    return result.examined


@dataclass(frozen=True)
class MutationReport:
    """Everything one ``fp8lab mutate`` run measured."""

    gates: tuple[str, ...]
    threshold: int
    catalogue: tuple[MutantResult, ...]
    before: tuple[MutantResult, ...]
    source: tuple[MutantResult, ...]
    equivalent_checked: dict[str, int] = field(default_factory=dict)
    score: float | None = None
    rechecks: tuple[Recheck, ...] = ()

    @property
    def min_margin(self) -> int | None:
        """The smallest kill margin among killed catalogue mutants."""
        killed = [r.margin for r in self.catalogue if r.verdict is MutantVerdict.KILLED]
        return min(killed) if killed else None

    @property
    def unjustified_survivors(self) -> tuple[str, ...]:
        """Source survivors with no equivalence justification."""
        return tuple(
            r.id
            for r in self.source
            if r.verdict is MutantVerdict.SURVIVED and r.id not in self.equivalent_checked
        )

    def seed_rows(self) -> list[dict[str, Any]]:
        """The G1/G3 analogue of the seed's evidence table, with the seed's numbers."""
        ours = {r.id: r for r in self.catalogue}
        rows = []
        for mutant_id, (failed, run) in SEED_TABLE.items():
            r = ours.get(mutant_id)
            rows.append(
                {
                    "id": mutant_id,
                    "built": r.built if r else None,
                    "cases": r.cases if r else None,
                    "failed": r.failed_assertions if r else None,
                    "assertions": r.assertions if r else None,
                    "verdict": r.verdict.value if r else "not run (gate not selected)",
                    "seed_failed": failed,
                    "seed_assertions": run,
                    "why_different": SEED_NOTES[mutant_id],
                }
            )
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``entries`` has one row per mutant with the fixed field names."""

        def entry(r: MutantResult, kind: str) -> dict[str, Any]:
            return {
                "id": r.id,
                "kind": kind,
                "verdict": r.verdict.value,
                "failed_assertions": r.failed_assertions,
                "assertions": r.assertions,
                "moved_words": r.moved_words,
                "killed_by": list(r.killed_by),
                "thin": r.thin,
                "equivalent": r.id in self.equivalent_checked,
            }

        return {
            "gates": list(self.gates),
            "threshold": self.threshold,
            "entries": [entry(r, "catalogue") for r in self.catalogue]
            + [entry(r, "source") for r in self.source],
            "catalogue": [r.to_dict() for r in self.catalogue],
            "before_strengthening": [r.to_dict() for r in self.before],
            "source": [r.to_dict() for r in self.source],
            "equivalent_checked": self.equivalent_checked,
            "equivalence_rechecks": [r.to_dict() for r in self.rechecks],
            "score": self.score,
            "min_margin": self.min_margin,
            "unjustified_survivors": list(self.unjustified_survivors),
            "seed_table": self.seed_rows(),
        }

    def to_json(self) -> str:
        """Stable JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, default=str)


def mutation_report(
    gates: Sequence[str] = ("G1", "G3", "GQ", "GF"),
    *,
    catalogue: bool = True,
    source: bool = False,
    threshold: int = 3,
    exhaustive: bool = True,
    executor: Executor | None = None,
    workers: int | None = None,
) -> MutationReport:
    """Run the catalogue (with and without G1's special words) and/or the source mutants.

    Each justified source survivor is re-checked (:mod:`.equivalence`); one that
    fails its re-check counts as unjustified. ``exhaustive=False`` re-checks on
    the boundary probes only (a screen, recorded as such in ``equivalence_rechecks``).
    ``executor`` and ``workers`` (its worker count) run the re-check sweeps
    elsewhere, e.g. on a dask cluster (:mod:`fp8lab.runtime.cluster`).

    Raises:
        ValueError: if neither part is asked for, or the gates check nothing.
    """
    if not catalogue and not source:
        raise ValueError("nothing to run: ask for the catalogue, the source mutants, or both")
    after = tuple(run_catalogue(gates, threshold=threshold)) if catalogue else ()
    # The quant gate's special words are what "before" takes away: the seed's table has
    # quant and gemm mutants, and the scheme and chain mutants would be judged the same twice.
    seed_gates = [g for g in gates if g in GATES and GATES[g].kind in ("quant", "gemm")]
    before = (
        tuple(run_catalogue(seed_gates, threshold=threshold, special_words=False))
        if catalogue and any(GATES[g].kind == "quant" for g in seed_gates)
        else ()
    )
    found = tuple(run_source(gates, threshold=threshold)) if source else ()
    checked: dict[str, int] = {}
    rechecks: tuple[Recheck, ...] = ()
    score = None
    if found:
        equivalents = load_equivalents()
        survivors = {r.id for r in found if r.verdict is MutantVerdict.SURVIVED}
        justified = {k: equivalents[k] for k in sorted(survivors & set(equivalents))}
        rechecks = tuple(
            recheck_equivalents(
                justified, exhaustive=exhaustive, workers=workers, executor=executor
            ).values()
        )
        checked = {r.key: r.examined for r in rechecks if r.equivalent}
        score = source_score(found, {k: equivalents[k] for k in checked})
    return MutationReport(tuple(gates), threshold, after, before, found, checked, score, rechecks)
