"""The bytes of a file someone handed fp8lab: only a regular file, opened without blocking.

A FIFO, a device or a directory named where a file belongs is refused at once
(``open`` of a FIFO with no writer would block forever; a device can stream
without end). The file is opened with ``O_NONBLOCK``, checked with ``fstat``
and read up to a bound. :func:`toml_depth` bounds a TOML document's nesting
before ``tomllib`` reads it (``tomllib`` recurses once per level of arrays
and inline tables, and builds a table per dotted key part).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NotRegularError", "read_regular", "toml_depth"]


class NotRegularError(ValueError):
    """The path names a FIFO, a device, a socket or a directory, not a regular file."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of the regular file at ``path`` (the caller sizes them).

    Raises:
        NotRegularError: for a FIFO, device, socket or directory.
        OSError: if it cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularError(f"{path} is {_kind(mode)}, not a regular file")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def toml_depth(text: str, limit: int) -> int:
    """An upper bound on ``text``'s nesting: open arrays and tables plus dotted key parts.

    Stops counting past ``limit``. Strings and comments are skipped.
    """
    depth = dots = deepest = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            end = i + len(quote)
            while end < n and text[end : end + len(quote)] != quote:
                end += 2 if ch == '"' and text[end] == "\\" else 1
            i = end + len(quote)
            continue
        if ch == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
        elif ch == ".":
            dots += 1
        if ch in "=\n,[{":
            dots = 0
        deepest = max(deepest, depth + dots)
        if deepest > limit:
            return deepest
        i += 1
    return deepest
