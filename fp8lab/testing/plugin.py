"""The pytest plugin of fp8lab (entry point ``pytest11``): ``--fp8lab-results DIR``.

It imports no pytest: the hooks below are plain functions pytest finds by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["pytest_addoption", "pytest_configure", "pytest_unconfigure"]


def pytest_addoption(parser: Any) -> None:
    """Add ``--fp8lab-results DIR``."""
    parser.addoption(
        "--fp8lab-results",
        metavar="DIR",
        default=None,
        help="file the record of every fp8lab.testing.assert_gate of the session under DIR",
    )


def pytest_configure(config: Any) -> None:
    """Start filing when ``--fp8lab-results`` is given."""
    folder = config.getoption("--fp8lab-results")
    if folder:
        from fp8lab.testing import filing_records_to

        Path(folder).mkdir(parents=True, exist_ok=True)
        filing_records_to(Path(folder))


def pytest_unconfigure(config: Any) -> None:
    """Stop filing."""
    if config.getoption("--fp8lab-results"):
        from fp8lab.testing import filing_records_to

        filing_records_to(None)
