"""MkDocs hook: each page's ``{{ fp8lab:... }}`` tokens become the facts they name.

The facts are made by :mod:`fp8lab.cli.doc_facts` from the data they come from
(the exit-status file, the published runs under ``results/``, the notebooks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fp8lab.cli.doc_facts import expand

ROOT = Path(__file__).resolve().parents[1]


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page with its tokens replaced; an unknown token fails the build."""
    return expand(markdown, ROOT)
