"""Where fp8lab's own files are: in a checkout, or inside an installed package.

In a checkout (the package folder beside ``pyproject.toml``), the notebooks
are the top-level ``notebooks/``, the one source. An installed fp8lab (a
wheel: not editable) carries a copy of them inside the package, made when the
wheel is built, and has no checkout. Results always go where the command
says (``--results``, by default ``./results`` of the current folder).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE_ROOT", "checkout_root", "notebooks_dir"]

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def checkout_root() -> Path | None:
    """The checkout fp8lab runs from, or None for an installed package."""
    root = PACKAGE_ROOT.parent
    return root if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir() else None


def notebooks_dir() -> Path:
    """The notebooks: the checkout's ``notebooks/``, else the installed copy."""
    root = checkout_root()
    return root / "notebooks" if root is not None else PACKAGE_ROOT / "notebooks"
