"""Frames on a pipe: arrays cross whole and exact; a bad or oversized frame is refused before
anything is allocated; a silent peer meets the deadline."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

from fp8lab.runtime.frames import (
    FrameError,
    FrameTimeoutError,
    FrameTooLargeError,
    read_frame,
    write_frame,
)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        with contextlib.suppress(OSError):
            os.close(fd)


def _raw(w: int, header: dict) -> None:
    head = json.dumps(header).encode()
    os.write(w, len(head).to_bytes(8, "little") + head)


def test_arrays_of_every_plain_kind_and_shape_cross_bit_for_bit(pipe: tuple[int, int]) -> None:
    r, w = pipe
    rng = np.random.default_rng(7)
    sent = [
        np.float32(0.035).reshape(()),  # 0-d stays 0-d
        rng.standard_normal((3, 5)).astype(np.float32)[:, ::2],  # not contiguous
        np.arange(7, dtype=np.uint8),
        np.zeros((0, 4), np.int64),
        np.array([1.5, -0.0], np.float64),
    ]
    write_frame(w, {"call": "x"}, sent)
    header, got = read_frame(r, time.monotonic() + 5, 1 << 20)
    assert header == {"call": "x"}
    for a, b in zip(sent, got, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.asarray(a).tobytes() == b.tobytes()


def test_objects_are_refused_on_both_sides(pipe: tuple[int, int]) -> None:
    r, w = pipe
    with pytest.raises(ValueError, match="not plain data"):
        write_frame(w, {}, [np.array([object()], dtype=object)])
    _raw(w, {"arrays": [["|O", [1]]]})
    with pytest.raises(FrameError, match="malformed"):
        read_frame(r, time.monotonic() + 5, 1 << 20)


def test_a_frame_over_the_cap_is_refused_before_it_is_read(pipe: tuple[int, int]) -> None:
    r, w = pipe
    _raw(w, {"arrays": [["<f4", [1 << 40]]]})  # 4 TiB: never allocated
    with pytest.raises(FrameError, match="over the"):
        read_frame(r, time.monotonic() + 5, 1 << 20)


def test_a_silent_peer_meets_the_deadline(pipe: tuple[int, int]) -> None:
    r, _ = pipe
    t0 = time.monotonic()
    with pytest.raises(FrameTimeoutError):
        read_frame(r, time.monotonic() + 0.2, 1 << 20)
    assert time.monotonic() - t0 < 5


def test_ml_dtypes_arrays_cross_as_their_bytes(pipe: tuple[int, int]) -> None:
    r, w = pipe
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    write_frame(w, {}, [codes.view(np.uint8)])
    _, (got,) = read_frame(r, time.monotonic() + 5, 1 << 20)
    assert got.tobytes() == codes.tobytes()


@pytest.mark.parametrize(
    "shape",
    [
        "[Infinity]",
        "[1e400]",
        "[-1]",
        "[" + "[" * 5000 + "]" * 5000 + "]",
    ],
    ids=["inf", "huge-float", "negative", "deep"],
)
def test_a_crafted_shape_is_a_malformed_frame_not_a_traceback(
    pipe: tuple[int, int], shape: str
) -> None:
    r, w = pipe
    head = ('{"arrays": [["<f4", ' + shape + "]]}").encode()
    os.write(w, len(head).to_bytes(8, "little") + head)
    with pytest.raises(FrameError, match="malformed"):
        read_frame(r, time.monotonic() + 5, 1 << 20)


def test_an_over_cap_frame_says_it_is_over_the_cap(pipe: tuple[int, int]) -> None:
    r, w = pipe
    _raw(w, {"arrays": [["<f4", [1 << 30]]]})
    with pytest.raises(FrameTooLargeError, match="over the 1,048,576-byte cap"):
        read_frame(r, time.monotonic() + 5, 1 << 20)
