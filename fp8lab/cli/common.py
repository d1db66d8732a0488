"""Shared CLI pieces: exit codes, JSON output, kernel loading."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from fp8lab.evidence import write_atomic
from fp8lab.gates import EXIT_CODES
from fp8lab.importing import ImportSpecError, import_object
from fp8lab.kernels import FunctionKernel, QuantKernel

__all__ = [
    "CliError",
    "json_on_stdout",
    "load_kernel",
    "load_user_object",
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


def load_user_object(spec: str, protocol: type, wrap: Callable[[str, Any], Any]) -> Any:
    """Import ``MODULE:FUNC``: an object implementing ``protocol`` as is, else ``wrap(spec, it)``.

    Raises:
        CliError: if the module cannot be imported or FUNC is missing or not callable.
    """
    try:
        target = import_object(spec)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None
    return target if isinstance(target, protocol) else wrap(spec, target)


def load_kernel(spec: str) -> QuantKernel:
    """Import ``MODULE:FUNC`` and wrap ``FUNC(x, scale) -> uint8 codes`` as a kernel."""
    kernel: QuantKernel = load_user_object(spec, QuantKernel, FunctionKernel)
    return kernel
