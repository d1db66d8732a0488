"""Keep freed memory in the process's heap, so that chunk after chunk reuses its pages.

A 2**32 sweep allocates the same few arrays of megabytes for each of its 1,024
chunks. glibc's malloc serves an allocation that large with a fresh ``mmap``
and unmaps it on ``free``, so every chunk faults its pages in again: on this
project's 2-core machine that was a fifth to a third of the proof plans' CPU
time, all of it system time. :func:`keep_heap` raises glibc's mmap threshold to
its documented maximum (32 MiB, above a chunk's largest array) and its trim
threshold, so those arrays come from the heap and their pages stay mapped; the
process keeps its peak heap instead of returning it. Codes are unchanged: only
where memory comes from changes. Without glibc (no ``mallopt``) nothing
changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

__all__ = ["keep_heap"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
_TRIM_THRESHOLD = 1 << 30


@functools.cache
def keep_heap() -> bool:
    """Set the thresholds once per process; True where glibc took both."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - present in glibc only
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    took = int(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) == 1
    return int(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)) == 1 and took
