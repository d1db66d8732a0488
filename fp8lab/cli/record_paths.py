"""Record files (``--json``, ``--junit-xml``) reserved before any kernel runs.

:func:`reserved_records` checks each target and creates it empty, exclusively,
before the command starts, so nothing can be there first, and a file that
exists is refused before any work. When the record is written
(:func:`write_record`) the reservation is checked: a file that appeared,
changed or was swapped there during the run (a kernel that read the command
line and planted a PASS) is replaced by the real record, and one line on
stderr says so. A reservation nothing was written to is removed at the end,
and a planted file there with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from fp8lab.cli.argtypes import check_json_target
from fp8lab.cli.common import CliError
from fp8lab.runtime.atomic import write_atomic

__all__ = ["json_on_stdout", "reserved_records", "write_json_output", "write_record"]

_JSON_STREAM: ContextVar[TextIO | None] = ContextVar("fp8lab_json_stream", default=None)


@dataclass
class _Reservation:
    flag: str
    stamp: tuple[int, int, int, int]
    written: bool = False


_RESERVED: ContextVar[dict[str, _Reservation] | None] = ContextVar("fp8lab_records", default=None)


def _stamp(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _reserve(path: str, flag: str) -> _Reservation:
    reason = check_json_target(path)
    if reason:
        raise CliError(reason.replace("--json", flag, 1))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        raise CliError(f"{flag} {path} exists; nothing is overwritten") from None
    except OSError as exc:
        raise CliError(f"cannot write {flag} {path}: {exc.strerror}") from None
    os.close(fd)
    stamp = _stamp(path)
    assert stamp is not None
    return _Reservation(flag, stamp)


def _say(path: str, reservation: _Reservation, what: str) -> None:
    print(
        f"fp8lab: {reservation.flag} {path} was written by something else during the run; {what}",
        file=sys.stderr,
    )


@contextlib.contextmanager
def reserved_records(targets: dict[str, str | None]) -> Iterator[None]:
    """Reserve each ``flag -> path`` target (``None`` and ``-`` are none) for the command's life.

    Raises:
        CliError: for a target that exists or cannot be created (nothing has run).
    """
    held: dict[str, _Reservation] = {}
    token = _RESERVED.set(held)
    try:
        for flag, path in targets.items():
            if path is not None and path != "-":
                held[path] = _reserve(path, flag)
        yield
    finally:
        _RESERVED.reset(token)
        for path, reservation in held.items():
            if reservation.written:
                continue
            if _stamp(path) != reservation.stamp and _stamp(path) is not None:
                _say(path, reservation, "removed (this run wrote no record)")
            with contextlib.suppress(OSError):
                os.unlink(path)


def write_record(path: str, data: bytes, flag: str) -> None:
    """Write a record to ``path``: over its reservation, else as a new file (never over one).

    Raises:
        CliError: if the path cannot be written, or (unreserved) exists.
    """
    held = _RESERVED.get() or {}
    reservation = held.get(path)
    try:
        if reservation is None:
            write_atomic(Path(path), data)
            return
        planted = _stamp(path) != reservation.stamp
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)  # a planted empty folder; a full one stays and is an error
        write_atomic(Path(path), data, overwrite=True)
        reservation.written, reservation.stamp = True, _stamp(path) or reservation.stamp
        if planted:
            _say(path, reservation, "replaced by this run's record")
    except FileExistsError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None


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
    """Write ``payload`` to ``path`` atomically ("-" is stdout): over its reservation, if reserved.

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
    write_record(path, text.encode(), "--json")
