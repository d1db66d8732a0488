"""What an HTML page would fetch from the network when opened: it should be nothing.

A report or the front page must open offline, so no element
may load a remote resource: ``src`` of any element, ``href`` of ``<link>``,
``data`` of ``<object>``, a CSS ``url(...)`` or ``@import``, or a script's
``import("...")``. Links a reader clicks (``<a href>``) are not loads.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["remote_loads"]

_REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
_CSS_URL = re.compile(r"""url\(\s*['"]?((?:https?:)?//[^'")\s]+)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+['"]((?:https?:)?//[^'"]+)""", re.IGNORECASE)
_JS_IMPORT = re.compile(r"""import\(\s*['"]((?:https?:)?//[^'"]+)""", re.IGNORECASE)
_LOADING = {"src", "srcset", "data", "poster", "background"}


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._tag = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag
        for name, value in attrs:
            if value is None:
                continue
            loads = name in _LOADING or (name == "href" and tag == "link")
            if loads and _REMOTE.match(value):
                self.found.append(f"<{tag} {name}={value}>")
            if name == "style":
                self.found += [f"<{tag} style> {u}" for u in _CSS_URL.findall(value)]

    def handle_data(self, data: str) -> None:
        if self._tag in ("style", "script"):
            for pattern in (_CSS_URL, _CSS_IMPORT, _JS_IMPORT):
                self.found += [f"<{self._tag}> {u}" for u in pattern.findall(data)]


def remote_loads(page: str) -> list[str]:
    """Every remote resource ``page`` would load, in document order (empty: none)."""
    parser = _Loads()
    parser.feed(page)
    parser.close()
    return parser.found
