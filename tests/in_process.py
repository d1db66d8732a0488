"""``fp8lab ARGV`` run in the test's own process, as a subprocess would see it.

``fp8lab.cli.main.main(argv)`` is called with the working folder, import path and
environment a ``python -m fp8lab`` child would have, and its output captured at
both levels: what Python prints, and what reaches file descriptors 1 and 2 (the
children it starts: kernel hosts, worker pools). The exit status is main's
return value, or a ``SystemExit``'s code. Everything is restored afterwards,
and the modules imported from the test's folders are forgotten, so the next
test's ``kern.py`` is its own. Warnings are shown, not raised, as in a process.

What only a process shows (its exit status when it dies, signals, isolation of
the command itself, an installed package) stays with real subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["run_main"]

_PACKAGE = Path(__file__).resolve().parents[1] / "fp8lab"


@contextlib.contextmanager
def _fd_capture() -> Iterator[tuple[tempfile._TemporaryFileWrapper[bytes], ...]]:
    """File descriptors 1 and 2 sent to two temporary files for the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            yield out, err
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _read(f: tempfile._TemporaryFileWrapper[bytes]) -> str:
    f.seek(0)
    return f.read().decode(errors="replace")


def _under(module: object, folders: Sequence[Path]) -> bool:
    where = getattr(module, "__file__", None)
    return bool(where) and any(Path(where).resolve().is_relative_to(f) for f in folders)


def run_main(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    path: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``fp8lab ARGV`` in this process, in ``cwd``, with ``path`` first on the import path.

    ``env`` is added to the environment (``PYTHONPATH`` is set to ``path``, so the
    command's own children find the same modules).
    """
    from fp8lab.cli.main import main

    folders = [Path(p).resolve() for p in path]
    # the test's own folders: not the checkout, whose fp8lab and tests stay imported
    own = [f for f in folders if not _PACKAGE.is_relative_to(f)]
    saved_env = dict(os.environ)
    saved_path, saved_cwd = list(sys.path), os.getcwd()
    before = set(sys.modules)
    os.environ.update(env or {})
    if folders:
        os.environ["PYTHONPATH"] = os.pathsep.join(str(f) for f in folders)
        sys.path[:0] = [str(f) for f in folders]
    out, err = io.StringIO(), io.StringIO()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with (
            _fd_capture() as (fd_out, fd_err),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            try:
                status = main(list(argv))
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            sys.stdout.flush()
            sys.stderr.flush()
            stdout, stderr = out.getvalue() + _read(fd_out), err.getvalue() + _read(fd_err)
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        os.environ.clear()
        os.environ.update(saved_env)
        for name in set(sys.modules) - before:
            if _under(sys.modules[name], own):
                del sys.modules[name]
    return subprocess.CompletedProcess(["fp8lab", *argv], status, stdout, stderr)


def assert_one_kernel_error_line(text: str, spec: str, reason: str) -> None:
    """``text`` (stdout and stderr) has one ``kernel-error`` line naming both, no traceback."""
    lines = [line for line in text.splitlines() if "kernel-error" in line]
    assert len(lines) == 1 and spec in lines[0] and reason in lines[0], lines
    assert "Traceback" not in text
