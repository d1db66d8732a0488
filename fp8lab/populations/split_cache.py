"""Split tables kept per rule digest: shipped for the named rules, cached on disk for the others.

A rule's split table (:func:`fp8lab.populations.rule_splits.split_table`)
depends only on its declaration (every field but name and source) and on
the search itself (:data:`TABLE_VERSION`), so it is keyed by a digest of
both. The named rules' tables ship with fp8lab (``rule_splits.json`` beside
this module, written by ``scripts/rule-splits``); any other rule's
is computed on first use and kept as ``DIGEST.json`` in the cache folder
(``$FP8LAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/fp8lab`` or
``~/.cache/fp8lab``, under ``rule-splits/``). A cache file that cannot be
read or written is recomputed or skipped, never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from fp8lab.populations.rule_splits import split_table
from fp8lab.populations.split_record import AxisSplit
from fp8lab.runtime.atomic import write_atomic
from fp8lab.specs.rule_file import tables_text
from fp8lab.specs.scale_rules import ScaleRule

__all__ = [
    "SHIPPED",
    "TABLE_VERSION",
    "cache_dir",
    "cached_split_table",
    "rule_digest",
    "shipped_tables",
    "table_from_json",
    "table_to_json",
]

TABLE_VERSION = 1  # bump when the search, the probes or GQ's population change
SHIPPED = "rule_splits.json"


def rule_digest(rule: ScaleRule) -> str:
    """A hex digest of ``rule``'s declaration (name and source aside) and the table version."""
    text = tables_text(dataclasses.replace(rule, name="-", source="-"))
    return hashlib.blake2b(f"{TABLE_VERSION}\n{text}".encode(), digest_size=16).hexdigest()


def table_to_json(table: tuple[AxisSplit, ...]) -> list[dict[str, Any]]:
    """``table`` as JSON-ready dicts."""
    return [dataclasses.asdict(s) for s in table]


def table_from_json(rows: list[dict[str, Any]]) -> tuple[AxisSplit, ...]:
    """The table :func:`table_to_json` wrote.

    Raises:
        TypeError, KeyError: for rows of another form.
    """
    tuples = ("float32_amaxes", "bfloat16_amaxes", "examined_amaxes")
    return tuple(
        AxisSplit(**{k: tuple(v) if k in tuples else v for k, v in r.items()})  # type: ignore[arg-type]
        for r in rows
    )


@cache
def shipped_tables() -> dict[str, tuple[AxisSplit, ...]]:
    """The shipped tables by rule digest (empty if the data file is missing)."""
    try:
        text = resources.files("fp8lab.populations").joinpath(SHIPPED).read_text("utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(text)
    if data.get("version") != TABLE_VERSION:
        return {}
    return {d: table_from_json(entry["splits"]) for d, entry in data["rules"].items()}


def cache_dir() -> Path:
    """The folder of computed tables: ``$FP8LAB_CACHE_DIR`` or the user's cache folder."""
    own = os.environ.get("FP8LAB_CACHE_DIR")
    if own:
        return Path(own) / "rule-splits"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fp8lab" / "rule-splits"


def cached_split_table(rule: ScaleRule, folder: Path | None = None) -> tuple[AxisSplit, ...]:
    """``rule``'s split table: shipped, else cached in ``folder``, else computed and cached."""
    digest = rule_digest(rule)
    shipped = shipped_tables().get(digest)
    if shipped is not None:
        return shipped
    path = (folder or cache_dir()) / f"{digest}.json"
    try:
        return table_from_json(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        pass
    table = split_table(rule)
    try:
        data = json.dumps(table_to_json(table)) + "\n"
        write_atomic(path, data.encode(), overwrite=True)
    except OSError:
        pass  # a read-only home: the table is recomputed next time
    return table
