"""The CLI's usage error (JSON output: cli/record_paths; kernel loading: kernels/sources)."""

from __future__ import annotations

from fp8lab.runtime.exit_codes import EXIT_CODES

__all__ = ["CliError"]


class CliError(Exception):
    """A usage error: printed plainly, exit status 2."""

    exit_status = EXIT_CODES["usage"]
