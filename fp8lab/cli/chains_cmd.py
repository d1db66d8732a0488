"""``fp8lab chains``: the fused-chain recipes as tables, and divergence counts between two."""

from __future__ import annotations

import argparse

from fp8lab.chains.catalogue import RECIPES
from fp8lab.chains.divergence import divergence
from fp8lab.cli.common import CliError, write_json_output

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "chains",
        help="list fused-chain recipes, or count where two recipes differ",
        description="Exit status: 0 done, 2 usage error.",
    )
    p.add_argument(
        "--diverge",
        metavar="A,B",
        help="two recipes of one chain: count differing fp8 bytes and pre-quant values by "
        "row kind (designed rows, realistic rows, a wide realistic case)",
    )
    p.add_argument("--json", "--out", dest="json", help="write the results here ('-' for stdout)")
    p.set_defaults(run=run)


def _recipes_table() -> str:
    lines = []
    for recipe in RECIPES.values():
        lines.append(f"{recipe.name} ({recipe.chain}): {recipe.source}")
        for s in recipe.steps:
            extra = " ".join(
                x
                for x in (
                    f"order={s.order}" if s.order else "",
                    f"variant={s.variant}" if s.variant else "",
                    "gemma" if s.gemma else "",
                    f"nan={s.nan_code:#04x}" if s.op == "quant" else "",
                )
                if x
            )
            rounds = ">".join(s.rounds)
            lines.append(
                f"  {s.op:<14} {','.join(s.inputs):<10} -> {s.output:<7} {rounds:<9} {extra}"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """List the recipes, or print and write the divergence counts."""
    if args.diverge is None:
        print(_recipes_table())
        write_json_output(args.json, {n: repr(c) for n, c in RECIPES.items()})
        return 0
    names = [n.strip() for n in args.diverge.split(",")]
    if len(names) != 2:
        raise CliError(f"--diverge wants two recipes A,B, got {args.diverge!r}")
    try:
        rows = divergence(names[0], names[1])
    except ValueError as exc:
        raise CliError(f"--diverge: {exc}") from None
    print(f"{names[0]} vs {names[1]}")
    print(f"{'kind':<18} {'words':>7} {'fp8 bytes differ':>17} {'pre-quant differ':>17}")
    for r in rows:
        print(f"{r.kind:<18} {r.words:>7} {r.bytes_differ:>17} {r.prequant_differ:>17}")
    write_json_output(
        args.json, {"a": names[0], "b": names[1], "rows": [r.to_dict() for r in rows]}
    )
    return 0
