"""The fused_chains notebook's tables: the recipes, their divergences, and their cost against exact.

Recipes as rows (:mod:`fp8lab.specs.chain_catalogue`); divergence counts per pair
of recipes that compute the same function (:func:`fp8lab.sweeps.chain_divergence`);
and, per recipe, the e4m3fn bytes its rounding choices cost against the exact
value rounded once (:func:`fp8lab.refs.chain_exact.exact_chain_codes`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from fp8lab.populations.chains import CHAIN_SEED, chain_population
from fp8lab.refs.chain_exact import exact_chain_codes
from fp8lab.refs.chain_ref import reference_chain
from fp8lab.specs.chain_catalogue import RECIPES, recipe_names, standalone_for
from fp8lab.specs.chain_recipe import CHAINS, Chain
from fp8lab.sweeps.chain_divergence import divergence

__all__ = [
    "ISSUE_PAIRS",
    "ISSUE_PUBLISHED",
    "CostRow",
    "PairRow",
    "RecipeRow",
    "StepRow",
    "comparable_pairs",
    "cost_totals",
    "divergence_rows",
    "recipe_rows",
    "rounding_cost",
    "step_rows",
]

# The two open vLLM issues, as the recipe pair each one is about (docs/gates/gf.md).
ISSUE_PAIRS = {
    "vllm#52104": ("vllm-cuda-fused-add-rmsnorm-static-fp8", "vllm-native-rmsnorm-fp8"),
    "vllm#49616": ("vllm-native-rmsnorm-fp8", "vllm-native-rmsnorm-f32-weight-fp8"),
}
# docs/gates/gf.md (``fp8lab chains --diverge A,B``, seed CHAIN_SEED): realistic-wide
# fp8 bytes / pre-quant values that differ, of 65,536.
ISSUE_PUBLISHED = {"vllm#52104": (910, 14_203), "vllm#49616": (988, 16_493)}


def _rounds(chain: Chain) -> str:
    return " > ".join(f"{s.op}[{'+'.join(s.rounds) or '-'}]" for s in chain.steps)


@dataclass(frozen=True)
class RecipeRow:
    """One recipe: its chain, the standalone sequence it is compared with, its roundings."""

    recipe: str
    chain: str
    steps: int
    roundings: str
    nan_code: str
    standalone: str
    source: str


def recipe_rows() -> list[RecipeRow]:
    """Every recipe of ``RECIPES``, in catalogue order."""
    rows = []
    for name, c in RECIPES.items():
        quant = c.step("quant")
        nan = f"{quant.nan_code:#04x}" if quant is not None else "-"
        rows.append(
            RecipeRow(name, c.chain, len(c.steps), _rounds(c), nan, standalone_for(name), c.source)
        )
    return rows


@dataclass(frozen=True)
class StepRow:
    """One step of one recipe, every field of :class:`fp8lab.specs.chain_recipe.Step`."""

    recipe: str
    index: int
    op: str
    inputs: str
    output: str
    rounds: str
    order: str
    variant: str
    gemma: bool
    source: str


def step_rows(chain: str) -> list[StepRow]:
    """The steps of every recipe of chain kind ``chain``.

    Raises:
        ValueError: for an unknown chain kind.
    """
    if chain not in CHAINS:
        raise ValueError(f"unknown chain {chain!r}; choose from {', '.join(CHAINS)}")
    return [
        StepRow(
            name,
            i,
            s.op,
            ",".join(s.inputs),
            s.output,
            "+".join(s.rounds),
            s.order,
            s.variant,
            s.gemma,
            s.source,
        )
        for name in recipe_names(chain)
        for i, s in enumerate(RECIPES[name].steps)
    ]


def comparable_pairs() -> list[tuple[str, str]]:
    """Every pair of recipes of one chain kind that compute the same function.

    A Gemma-weighted recipe multiplies by ``w + 1``, a different function, so
    it is paired only with other Gemma-weighted recipes.
    """
    pairs = []
    for chain in CHAINS:
        names = recipe_names(chain)
        for a, b in itertools.combinations(names, 2):
            if RECIPES[a].gemma() == RECIPES[b].gemma():
                pairs.append((a, b))
    return pairs


@dataclass(frozen=True)
class PairRow:
    """One recipe pair on one row kind: words, differing fp8 bytes, differing pre-quant values."""

    a: str
    b: str
    issue: str
    kind: str
    words: int
    bytes_differ: int
    prequant_differ: int
    command: str


def divergence_rows(pairs: list[tuple[str, str]], seed: int = CHAIN_SEED) -> list[PairRow]:
    """:func:`fp8lab.sweeps.chain_divergence` for each pair, one row per row kind."""
    issue_of = {pair: issue for issue, pair in ISSUE_PAIRS.items()}
    rows = []
    for a, b in pairs:
        issue = issue_of.get((a, b)) or issue_of.get((b, a)) or ""
        for r in divergence(a, b, seed=seed):
            rows.append(
                PairRow(
                    a,
                    b,
                    issue,
                    r.kind,
                    r.words,
                    r.bytes_differ,
                    r.prequant_differ,
                    f"fp8lab chains --diverge {a},{b}",
                )
            )
    return rows


@dataclass(frozen=True)
class CostRow:
    """One recipe on one row kind: bytes that differ from the exact value rounded once.

    ``words`` counts the output words whose exact value is defined (finite
    inputs); ``undefined`` the others, which are not compared.
    """

    recipe: str
    kind: str
    words: int
    bytes_differ: int
    undefined: int


def rounding_cost(recipe: str, seed: int = CHAIN_SEED) -> list[CostRow]:
    """The bytes ``recipe``'s roundings cost on GF's population, per row kind.

    Raises:
        ValueError: for an unknown recipe.
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(RECIPES)}")
    chain = RECIPES[recipe]
    counts: dict[str, list[int]] = {}
    for case in chain_population(chain.chain, seed=seed):
        got = reference_chain(chain, case.inputs)["quant"]
        want, defined = exact_chain_codes(chain, case.inputs)
        differ = (got != want) & defined
        for row, kind in enumerate(case.labels):
            c = counts.setdefault(kind, [0, 0, 0])
            c[0] += int(defined[row].sum())
            c[1] += int(differ[row].sum())
            c[2] += int((~defined[row]).sum())
    return [CostRow(recipe, k, *v) for k, v in counts.items()]


def cost_totals(rows: list[CostRow]) -> dict[str, tuple[int, int]]:
    """Per recipe: (words, differing bytes) over all row kinds."""
    out: dict[str, tuple[int, int]] = {}
    for r in rows:
        w, d = out.get(r.recipe, (0, 0))
        out[r.recipe] = (w + r.words, d + r.bytes_differ)
    return out
