"""What a gate's bundle is made of: its cases, their sidecar lines, and their replay.

A gate with bundles names a :class:`BundleFormat` in its record
(:mod:`fp8lab.specs.gates`); :mod:`.export` writes one and :mod:`.replay`
checks one through it, so neither knows any gate by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fp8lab.bundle.cases import BundleCase

__all__ = ["BundleFormat", "Replay"]

# replay(name, root, cases, named, nan_policy) -> (kernel, the runner's extra keywords);
# ``cases`` are those the bundle holds (empty for an empty case list, where allowed)
Replay = Callable[[str, Path, list[BundleCase], Mapping[str, str], str], tuple[Any, dict[str, Any]]]


@dataclass(frozen=True)
class BundleFormat:
    """One gate's bundle.

    Args:
        cases: ``cases(**named)``: this version's cases, in the gate's order.
        sidecar_line: one case's ``bundle.txt`` line from its ``bundle.json`` entry.
        replay: the kernel that serves a bundle's outputs to the gate (:data:`Replay`).
        keys: what the bundle is for besides the gate (GQ: ``scheme``, ``rule``),
            named in ``bundle.json``, in ``bundle.txt``'s header and in the
            population hash's first line.
        may_be_empty: a ``bundle.json`` with an empty case list is read as one
            whose kernel answered nothing (the gate examines nothing and FAILs);
            otherwise it is refused.
    """

    cases: Callable[..., list[BundleCase]]
    sidecar_line: Callable[[dict[str, Any]], str]
    replay: Replay
    keys: tuple[str, ...] = ()
    may_be_empty: bool = False

    def head(self, named: Mapping[str, Any]) -> str:
        """The line the population hash starts with: the named values, or nothing."""
        return " ".join(str(named[k]) for k in self.keys) + "\n" if self.keys else ""
