"""Hand-written mutants of a production port: exact text edits, compiled into a fresh module.

A catalogue mutant of a port is the port's own source with one bug written
in: each edit replaces a text that occurs exactly once in the module, and
the result is compiled with :func:`.source.compile_module`, so the working
tree is never edited and the port itself (not a re-implementation) is what
runs. A stale edit (its text gone or repeated) fails the build, so the mutant
is INCOMPETENT rather than silently the unmutated port.
"""

from __future__ import annotations

import ast
import difflib
import types
from dataclasses import dataclass

from fp8lab.mutants.source import compile_module, parse_module

__all__ = ["SourcePatch"]


@dataclass(frozen=True)
class SourcePatch:
    """Edits ``(old, new)`` of ``module``'s source; every ``old`` must occur exactly once."""

    module: str
    edits: tuple[tuple[str, str], ...]

    def text(self) -> tuple[str, str]:
        """The module's source before and after the edits.

        Raises:
            ValueError: if an edit's text does not occur exactly once.
        """
        _, before = parse_module(self.module)
        after = before
        for old, new in self.edits:
            count = after.count(old)
            if count != 1:
                raise ValueError(f"{self.module}: edit text occurs {count} times: {old!r}")
            after = after.replace(old, new)
        return before, after

    def load(self, name: str) -> types.ModuleType:
        """The edited module, compiled and executed as a fresh module called ``name``.

        Raises:
            Exception: a stale edit (ValueError), or whatever compiling the
                mutant raises.
        """
        _, after = self.text()
        return compile_module(ast.parse(after, filename=f"<{name}>"), name)

    def diff(self) -> str:
        """The unified diff of the edits (one line of context)."""
        before, after = self.text()
        return "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                self.module,
                "mutant",
                n=1,
            )
        )
