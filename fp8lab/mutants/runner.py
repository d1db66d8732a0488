"""The mutation runs: the catalogue, the source-level mutants, and the report."""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any

from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels import BUILTIN_KERNELS, StaticQuantKernel
from fp8lab.mutants import chain_mutants, scheme_mutants
from fp8lab.mutants.catalogue import CATALOGUE, MutantSpec
from fp8lab.mutants.harness import GateRunner, MutantResult, judge, require_green
from fp8lab.mutants.quant_mutants import QUANT_BUILDERS
from fp8lab.mutants.source import SourceMutation, load_mutant, parse_module, source_mutations
from fp8lab.specs.gates import GATES, load

__all__ = [
    "EQUIVALENT_FILE",
    "SOURCE_MODULES",
    "Equivalent",
    "gate_runners",
    "load_equivalents",
    "run_catalogue",
    "run_source",
    "source_score",
]

EQUIVALENT_FILE = Path(__file__).with_name("equivalent.toml")

# Built-in kernel modules mutated at the source level, and how to get kernels out of one.
SOURCE_MODULES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "fp8lab.kernels.f32tofp8": ("quant", lambda m: StaticQuantKernel("f32tofp8", m.f32_to_fp8)),
    "fp8lab.kernels.quant": ("quant", lambda m: list(m.BUILTIN_KERNELS.values())),
    "fp8lab.kernels.matmul_epilogue": ("gemm", lambda m: _gemm_epilogue_kernels(m)),
}


def _gemm_epilogue_kernels(module: Any) -> Any:
    from fp8lab.mutants.gemm_mutants import kernels_with_epilogue

    return kernels_with_epilogue(module)


# Targets whose mutants each mutate the port of one rule or recipe: that port, unmutated,
# is the mutant's own baseline.
_RESTORED_PER_MUTANT: dict[str, Callable[[str], Any]] = {
    "scheme": scheme_mutants.restored,
    "chain": chain_mutants.restored,
}


def gate_runners(gates: Sequence[str], *, special_words: bool = True) -> dict[str, GateRunner]:
    """Each gate's mutation runner (its record's ``mutants``); ``special_words=False``: seed G1.

    GQ's and GF's runners take their options (scheme and rule; chain and recipe) from
    the subject the mutant's builder returns, which reads them from its own table.

    Raises:
        ValueError: for a gate no mutation run uses.
    """
    mutated = sorted(n for n, g in GATES.items() if g.mutants)
    if not gates or any(g not in mutated for g in gates):
        raise ValueError(f"mutation runs take gates from {mutated}, got {list(gates)}")
    return {g: partial(load(GATES[g].mutants), special_words=special_words) for g in gates}


def _baseline(gates: Mapping[str, GateRunner]) -> dict[str, int]:
    """Case counts of the restored quant and GEMM kernels, which must pass every gate they face."""
    restored: dict[str, Callable[[], Any]] = {
        "quant": lambda: BUILTIN_KERNELS["vllm_cpp"],
        "gemm": _builtin_gemm,
    }
    cases: dict[str, int] = {}
    for target in sorted({GATES[g].kind for g in gates} & set(restored)):
        cases |= require_green(f"restored {target} kernel", target, restored[target](), gates)
    return cases


def _own_baseline(
    spec: MutantSpec, gates: Mapping[str, GateRunner], seen: dict[tuple[str, str], dict[str, int]]
) -> dict[str, int]:
    """Case counts (all its ports together) of the unmutated ports a scheme or chain mutant mutates.

    Each port must pass every gate it faces; ``seen`` keeps each port's counts, so a
    port shared by several mutants is gated once per run.
    """
    built = _RESTORED_PER_MUTANT[spec.target](spec.build)
    subjects = built if isinstance(built, list) else [built]
    total: dict[str, int] = {}
    for subject in subjects:
        key = (spec.target, subject.name)
        if key not in seen:
            label = f"unmutated {subject.name} (for {spec.id})"
            seen[key] = require_green(label, spec.target, subject, gates)
        for g, n in seen[key].items():
            total[g] = total.get(g, 0) + n
    return total


def _builtin_gemm() -> Any:
    from fp8lab.mutants.gemm_mutants import builtin_gemm_kernel

    return builtin_gemm_kernel()


def _builder(spec: MutantSpec) -> Callable[[], Any]:
    if spec.target == "quant":
        return QUANT_BUILDERS[spec.build]
    if spec.target == "scheme":
        return scheme_mutants.SCHEME_BUILDERS[spec.build]
    if spec.target == "chain":
        return chain_mutants.CHAIN_BUILDERS[spec.build]
    from fp8lab.mutants.gemm_mutants import GEMM_BUILDERS

    return GEMM_BUILDERS[spec.build]


def run_catalogue(
    gates: Sequence[str] = ("G1",),
    *,
    threshold: int = 3,
    special_words: bool = True,
    catalogue: Sequence[MutantSpec] = CATALOGUE,
) -> list[MutantResult]:
    """Judge every catalogue mutant whose target a selected gate checks.

    Raises:
        ValueError: for unknown gates, or when no mutant applies (nothing would run).
    """
    runners = gate_runners(gates, special_words=special_words)
    targets = {GATES[g].kind for g in runners}
    chosen = [m for m in catalogue if m.target in targets]
    if not chosen:
        raise ValueError(f"no catalogue mutant is checked by {list(gates)}")
    baseline = _baseline(runners)
    seen: dict[tuple[str, str], dict[str, int]] = {}
    return [
        judge(
            m.id,
            m.description,
            m.target,
            _builder(m),
            runners,
            _own_baseline(m, runners, seen) if m.target in _RESTORED_PER_MUTANT else baseline,
            baseline_is_total=m.target in _RESTORED_PER_MUTANT,
            threshold=threshold,
            diff=_catalogue_diff(m),
        )
        for m in chosen
    ]


def _catalogue_diff(spec: MutantSpec) -> str:
    """The source diff of a scheme or chain mutant (a patch of its port); empty otherwise."""
    tables: dict[str, Mapping[str, Any]] = {
        "scheme": scheme_mutants.SCHEME_MUTANTS,
        "chain": chain_mutants.CHAIN_MUTANTS,
    }
    mutant = tables.get(spec.target, {}).get(spec.build)
    try:
        return mutant.patch().diff() if mutant is not None else ""
    except ValueError:  # a stale edit: the build fails too, and the mutant is INCOMPETENT
        return ""


@dataclass(frozen=True)
class Equivalent:
    """A survivor justified as equivalent, with the text it must still match."""

    key: str
    original: str
    replacement: str
    reason: str


def load_equivalents(path: Path = EQUIVALENT_FILE) -> dict[str, Equivalent]:
    """Read the justified equivalent mutants."""
    data = tomllib.loads(path.read_text())
    return {e["key"]: Equivalent(**e) for e in data.get("equivalent", [])}


def _diff(mutation: SourceMutation) -> str:
    _, text = parse_module(mutation.module)
    lines = text.splitlines()
    before = lines[mutation.line - 1] if mutation.line else mutation.original
    after = before.replace(mutation.original, mutation.replacement, 1)
    return "".join(
        difflib.unified_diff(
            [before + "\n"], [after + "\n"], f"{mutation.module}:{mutation.line}", "mutant", n=0
        )
    )


def run_source(
    gates: Sequence[str] = ("G1",),
    *,
    modules: Sequence[str] | None = None,
    threshold: int = 3,
) -> list[MutantResult]:
    """Generate and judge every operator mutant of the built-in kernel modules.

    Raises:
        ValueError: for unknown gates or modules, or when no module applies.
    """
    runners = gate_runners(gates)
    targets = {GATES[g].kind for g in runners}
    names = list(modules) if modules else list(SOURCE_MODULES)
    unknown = [m for m in names if m not in SOURCE_MODULES]
    if unknown:
        raise ValueError(f"no source mutation plan for {unknown}; known: {sorted(SOURCE_MODULES)}")
    chosen = [m for m in names if SOURCE_MODULES[m][0] in targets]
    if not chosen:
        raise ValueError(f"no module among {names} is checked by {list(gates)}")
    baseline = _baseline(runners)
    results = []
    for module in chosen:
        target, kernels_of = SOURCE_MODULES[module]
        require_green(f"unmutated {module}", target, kernels_of(import_module(module)), runners)
        for mutation in source_mutations(module):
            build = partial(lambda mu, ko: ko(load_mutant(mu)), mutation, kernels_of)
            results.append(
                judge(
                    mutation.key,
                    f"{mutation.original} -> {mutation.replacement}",
                    target,
                    build,
                    runners,
                    baseline,
                    threshold=threshold,
                    diff=_diff(mutation),
                )
            )
    return results


def source_score(results: Sequence[MutantResult], equivalents: Mapping[str, Equivalent]) -> float:
    """Killed / (all - incompetent - justified equivalent)."""
    counted = [
        r for r in results if r.verdict is not MutantVerdict.INCOMPETENT and r.id not in equivalents
    ]
    if not counted:
        raise ValueError("no source mutant counted: the score would be vacuous")
    return sum(r.verdict is MutantVerdict.KILLED for r in counted) / len(counted)
