"""``fp8lab chains``: recipe tables, divergence counts, silu-mul enumerations.

``--diverge A,B`` counts differences on sampled populations
(:mod:`fp8lab.sweeps.chain_divergence`); ``--enumerate A,B`` counts every differing
(gate, up) pair of two silu-mul recipes (:mod:`fp8lab.sweeps.chain_enumeration`).
"""

from __future__ import annotations

import argparse
import time

from fp8lab.cli.argtypes import positive_float_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.record_paths import write_json_output
from fp8lab.specs.chain_catalogue import RECIPES

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "chains",
        help="list fused-chain recipes, or count where two recipes differ",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--diverge",
        metavar="A,B",
        help="two recipes of one chain: count differing fp8 bytes and pre-quant values by "
        "row kind (designed rows, realistic rows, a wide realistic case)",
    )
    mode.add_argument(
        "--enumerate",
        metavar="A,B",
        help="two silu-mul recipes: count every one of the 2**32 bf16 (gate, up) pairs "
        "whose fp8 bytes differ at --scale, with a coverage proof",
    )
    p.add_argument(
        "--scale",
        type=positive_float_arg,
        metavar="S",
        help="the static per-tensor scale for --enumerate (default 1.0)",
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


def _pair(flag: str, value: str) -> tuple[str, str]:
    names = [n.strip() for n in value.split(",")]
    if len(names) != 2:
        raise CliError(f"{flag} wants two recipes A,B, got {value!r}")
    return names[0], names[1]


def _diverge(value: str, json_path: str | None) -> int:
    from fp8lab.sweeps.chain_divergence import divergence

    a, b = _pair("--diverge", value)
    try:
        rows = divergence(a, b)
    except ValueError as exc:
        raise CliError(f"--diverge: {exc}") from None
    print(f"{a} vs {b}")
    print(f"{'kind':<18} {'words':>7} {'fp8 bytes differ':>17} {'pre-quant differ':>17}")
    for r in rows:
        print(f"{r.kind:<18} {r.words:>7} {r.bytes_differ:>17} {r.prequant_differ:>17}")
    write_json_output(json_path, {"a": a, "b": b, "rows": [r.to_dict() for r in rows]})
    return 0


def _enumerate(value: str, scale: float, json_path: str | None) -> int:
    from fp8lab.sweeps.chain_enumeration import check_silu_mul_pair, enumerate_silu_mul

    a, b = _pair("--enumerate", value)
    try:
        check_silu_mul_pair(a, b, scale)
    except ValueError as exc:
        raise CliError(f"--enumerate: {exc}") from None
    start = time.perf_counter()
    result = enumerate_silu_mul(a, b, scale)
    seconds = time.perf_counter() - start
    print(f"{a} vs {b} at scale {scale!r}")
    print(
        f"examined {result.examined:,} (g, u) pairs, covered {result.covered}; "
        f"rows evaluated in full {result.full_rows:,}, by the shortcut {result.shortcut_rows:,}"
    )
    classes = ", ".join(f"{k} {v:,}" for k, v in result.classes.items())
    print(f"fp8 bytes differ: {result.differ:,} ({classes}); {seconds:.1f} s")
    for f in result.first:
        print(f"  g={f['g']} u={f['u']}: {f['a']} vs {f['b']} ({f['class']})")
    write_json_output(json_path, {**result.to_dict(), "seconds": round(seconds, 1)})
    return 0


def run(args: argparse.Namespace) -> int:
    """List the recipes, or print and write divergence counts or an enumeration."""
    if args.scale is not None and args.enumerate is None:
        raise CliError("--scale applies to --enumerate only")
    if args.diverge is not None:
        return _diverge(args.diverge, args.json)
    if args.enumerate is not None:
        return _enumerate(args.enumerate, 1.0 if args.scale is None else args.scale, args.json)
    print(_recipes_table())
    write_json_output(args.json, {n: repr(c) for n, c in RECIPES.items()})
    return 0
