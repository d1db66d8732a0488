"""Facts the manual states, made from the data they come from.

A page under ``docs/`` holds a token ``{{ fp8lab:NAME }}`` where a fact goes;
``make docs`` (through ``docs/hooks.py``) puts the text made here in its place.
So no page restates a fact by hand, and a sentence can be reworded without a
test breaking. The tokens:

- ``exit-statuses``: the table of every subcommand's exit statuses, from
  :mod:`fp8lab.cli.exit_statuses` (which ``fp8lab SUBCOMMAND --help`` prints too);
- ``published-runs``: the table of the published run of each notebook and of the proofs;
- ``run:KIND``: the published run of ``KIND``, as ``results/KIND/RUN_ID``;
- ``check-scales``: how many scales the ``divide_vs_reciprocal`` notebook checks
  detection at (its parameters cell).

An unknown token, or a run that is not there, is an error: the build fails.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

from fp8lab.cli.exit_statuses import CODES, exit_statuses

__all__ = ["TOKEN", "DocFactError", "expand", "published_runs"]

TOKEN = re.compile(r"\{\{\s*fp8lab:([a-z-]+)(?::([a-z_0-9-]+))?\s*\}\}")


class DocFactError(ValueError):
    """A token the manual holds cannot be made: unknown, or its data is missing."""


def _exit_table() -> str:
    head = "| subcommand | " + " | ".join(map(str, CODES)) + " |"
    rule = "|---" * (len(CODES) + 1) + "|"
    rows = [
        f"| `{name}` | " + " | ".join(row.get(c, "\N{EN DASH}") for c in CODES) + " |"
        for name, row in exit_statuses().items()
    ]
    return "\n".join([head, rule, *rows])


def published_runs(results: Path) -> dict[str, str]:
    """Per kind (each notebook, ``proofs``), its published complete run: ``results/KIND/ID``."""
    from fp8lab.evidence.index import headline_runs, repo_notebooks

    runs = headline_runs(results, repo_notebooks())
    return {
        kind: f"results/{kind}/{run.directory.name}"
        for kind, run in sorted(runs.items())
        if run.manifest["status"] == "complete"
    }


def _run(results: Path, kind: str) -> str:
    runs = published_runs(results)
    if kind not in runs:
        raise DocFactError(f"no published complete run of {kind!r} under {results.name}/")
    return f"`{runs[kind]}`"


def _runs_table(results: Path) -> str:
    rows = [f"| `{kind}` | `{path}` |" for kind, path in published_runs(results).items()]
    return "\n".join(["| kind | published run |", "|---|---|", *rows])


def _check_scales(root: Path) -> str:
    nb = json.loads((root / "notebooks" / "divide_vs_reciprocal.ipynb").read_text())
    cells = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    for line in "".join(cells[0]["source"]).splitlines() if cells else []:
        if line.startswith("check_scales"):
            value = ast.literal_eval(line.split("=", 1)[1].split("#")[0].strip())
            return str(len(value))
    raise DocFactError("divide_vs_reciprocal.ipynb has no check_scales parameter")


def expand(markdown: str, root: Path) -> str:
    """``markdown`` with every ``{{ fp8lab:... }}`` token replaced; ``root``: the repository."""
    results = root / "results"
    makers: dict[str, Callable[[str | None], str]] = {
        "exit-statuses": lambda _: _exit_table(),
        "published-runs": lambda _: _runs_table(results),
        "run": lambda kind: _run(results, kind or ""),
        "check-scales": lambda _: _check_scales(root),
    }

    def one(match: re.Match[str]) -> str:
        name, arg = match.group(1), match.group(2)
        if name not in makers or (name == "run") != (arg is not None):
            raise DocFactError(f"unknown token {match.group(0)!r}")
        return makers[name](arg)

    return TOKEN.sub(one, markdown)
