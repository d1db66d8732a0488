"""Frames on a pipe: a JSON header and numpy arrays, read against a deadline and a size cap.

A frame is an 8-byte length, a JSON header (its ``arrays`` entry gives each
array's dtype and shape) and the arrays' raw bytes, C-ordered. Only plain
dtypes cross (no object arrays): nothing a peer sends can run code in the
reader. The reader sizes every part before it allocates or reads it, and
reads each array straight into its own buffer.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import select
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "FrameClosedError",
    "FrameError",
    "FrameTimeoutError",
    "FrameTooLargeError",
    "read_frame",
    "widen_pipe",
    "write_frame",
]

_LENGTH = 8


class FrameError(Exception):
    """The peer closed the pipe, or sent a frame that is malformed or too large."""


class FrameClosedError(FrameError):
    """The peer closed the pipe (it exited, or was killed)."""


class FrameTimeoutError(FrameError):
    """No whole frame arrived before the deadline."""


class FrameTooLargeError(FrameError):
    """The peer announced a frame over the reader's cap (nothing of it was allocated)."""


_PLAIN_KINDS = "biufcmMSUV"  # every numpy kind but objects
_PIPE_BYTES = 1 << 20  # F_SETPIPE_SZ: fewer wake-ups for a chunk of millions of inputs


def widen_pipe(fd: int) -> None:
    """Ask for a larger pipe buffer (Linux); where it cannot be had, keep the default."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", 1031)
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)


def _write_all(fd: int, parts: list[memoryview]) -> None:
    """Write ``parts`` in order, as few system calls (and wake-ups of the reader) as it takes."""
    parts = [p for p in parts if len(p)]
    while parts:
        written = os.writev(fd, parts)
        while parts and written >= len(parts[0]):
            written -= len(parts[0])
            parts.pop(0)
        if parts and written:
            parts[0] = parts[0][written:]


def write_frame(fd: int, header: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> None:
    """Write ``header`` and ``arrays`` as one frame.

    Raises:
        ValueError: for an array of objects (its elements are not plain data).
        OSError: if the pipe is closed.
    """
    plain = [np.asarray(a, order="C") for a in arrays]  # keeps a 0-d array 0-d
    for array in plain:
        if array.dtype.kind not in _PLAIN_KINDS or array.dtype.hasobject:
            raise ValueError(f"an array of {array.dtype} is not plain data")
    shapes = [[a.dtype.str, list(a.shape)] for a in plain]
    head = json.dumps({**header, "arrays": shapes}).encode()
    parts = [memoryview(len(head).to_bytes(_LENGTH, "little") + head)]
    parts += [array.reshape(-1).view(np.uint8).data for array in plain]
    _write_all(fd, parts)


def _wait(fd: int, deadline: float | None) -> None:
    if deadline is not None:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            raise FrameTimeoutError("no answer before the deadline")


def _read_into(fd: int, buffer: memoryview, deadline: float | None) -> None:
    done = 0
    while done < len(buffer):
        _wait(fd, deadline)
        got = os.readv(fd, [buffer[done:]])
        if not got:
            raise FrameClosedError("the peer closed the pipe")
        done += got


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    out = bytearray(size)
    _read_into(fd, memoryview(out), deadline)
    return bytes(out)


def _array_shape(item: Any) -> tuple[np.dtype[Any], tuple[int, ...]]:
    text, shape = item
    dtype = np.dtype(str(text))
    if dtype.kind not in _PLAIN_KINDS or dtype.hasobject:
        raise ValueError(f"an array of {dtype} is not plain data")
    dims = tuple(int(n) for n in shape)
    if any(n < 0 for n in dims) or len(dims) > 32:
        raise ValueError(f"a bad shape {dims}")
    return dtype, dims


def read_frame(
    fd: int, deadline: float | None, max_bytes: int
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """One frame: its header and its arrays.

    Raises:
        FrameTimeoutError: if ``deadline`` (a ``time.monotonic`` value) passes first.
        FrameError: if the pipe closes, or the frame is malformed or over ``max_bytes``.
    """
    size = int.from_bytes(_read_exact(fd, _LENGTH, deadline), "little")
    if size > max_bytes:
        raise FrameTooLargeError(f"a header of {size:,} bytes is over the {max_bytes:,}-byte cap")
    try:
        header = json.loads(_read_exact(fd, size, deadline))
        shapes = [_array_shape(item) for item in header.pop("arrays")]
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise FrameError(f"a malformed frame header ({type(exc).__name__})") from None
    except RecursionError:
        raise FrameError("a malformed frame header (nested too deep)") from None
    total = sum(dtype.itemsize * math.prod(dims) for dtype, dims in shapes)
    if not isinstance(header, dict):
        raise FrameError("a malformed frame header (not an object)")
    if total > max_bytes:
        raise FrameTooLargeError(f"a frame of {total:,} bytes is over the {max_bytes:,}-byte cap")
    arrays = []
    for dtype, dims in shapes:
        array = np.empty(dims, dtype)
        if array.nbytes:
            _read_into(fd, array.reshape(-1).view(np.uint8).data, deadline)
        arrays.append(array)
    return header, arrays
