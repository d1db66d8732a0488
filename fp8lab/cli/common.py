"""Shared CLI pieces: the usage error and JSON output (kernels: :mod:`fp8lab.cli.kernel_args`)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from fp8lab.runtime.atomic import write_atomic
from fp8lab.runtime.exit_codes import EXIT_CODES

__all__ = [
    "CliError",
    "json_on_stdout",
    "write_json_output",
]

_JSON_STREAM: ContextVar[TextIO | None] = ContextVar("fp8lab_json_stream", default=None)


class CliError(Exception):
    """A usage error: printed plainly, exit status 2."""

    exit_status = EXIT_CODES["usage"]


@contextlib.contextmanager
def json_on_stdout() -> Iterator[None]:
    """For ``--json -``: everything printed goes to stderr; only the JSON reaches stdout."""
    token = _JSON_STREAM.set(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _JSON_STREAM.reset(token)


def write_json_output(path: str | None, payload: Any) -> None:
    """Write ``payload`` to ``path`` atomically ("-" is stdout); never overwrite.

    Raises:
        CliError: if the path exists or cannot be written.
    """
    if path is None:
        return
    text = json.dumps(payload, indent=2, sort_keys=True) + "\n"
    if path == "-":
        stream = _JSON_STREAM.get() or sys.stdout
        stream.write(text)
        stream.flush()
        return
    try:
        write_atomic(Path(path), text.encode())
    except FileExistsError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write --json {path}: {exc.strerror or exc}") from None
