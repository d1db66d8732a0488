"""Frames on a pipe: a JSON header and numpy arrays, read against a deadline and a size cap.

A frame is an 8-byte length, a JSON header (its ``arrays`` entry gives each
array's byte count) and the arrays in ``.npy`` form, written without pickle
and read with ``allow_pickle=False``: nothing a peer sends can run code in the
reader. The reader sizes every part before it reads it.
"""

from __future__ import annotations

import io
import json
import os
import select
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["FrameError", "FrameTimeoutError", "read_frame", "write_frame"]

_LENGTH = 8


class FrameError(Exception):
    """The peer closed the pipe, or sent a frame that is malformed or too large."""


class FrameTimeoutError(FrameError):
    """No whole frame arrived before the deadline."""


def _encode(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def write_frame(fd: int, header: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> None:
    """Write ``header`` and ``arrays`` as one frame.

    Raises:
        ValueError: for an array numpy cannot save without pickle (an object array).
        OSError: if the pipe is closed.
    """
    blobs = [_encode(a) for a in arrays]
    head = json.dumps({**header, "arrays": [len(b) for b in blobs]}).encode()
    payload = b"".join([len(head).to_bytes(_LENGTH, "little"), head, *blobs])
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise FrameTimeoutError("no answer before the deadline")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise FrameError("the peer closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


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
        raise FrameError(f"a header of {size} bytes is over the {max_bytes}-byte limit")
    try:
        header = json.loads(_read_exact(fd, size, deadline))
        sizes = [int(n) for n in header.pop("arrays")]
    except (ValueError, KeyError, TypeError) as exc:
        raise FrameError(f"a malformed frame header ({exc})") from None
    if not isinstance(header, dict) or any(n < 0 for n in sizes) or sum(sizes) > max_bytes:
        raise FrameError(f"a frame of {sum(sizes)} bytes is over the {max_bytes}-byte limit")
    arrays = []
    for n in sizes:
        try:
            arrays.append(np.load(io.BytesIO(_read_exact(fd, n, deadline)), allow_pickle=False))
        except (ValueError, OSError) as exc:
            raise FrameError(f"a malformed array ({exc})") from None
    return header, arrays
