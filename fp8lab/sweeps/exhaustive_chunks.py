"""One chunk of an exhaustive comparison, and merging chunks into one deterministic result.

Each side is called through :func:`fp8lab.runtime.guard.call_kernel` on its own private,
read-only copy of the patterns (a user's encoder in its own process, which
gets the copy through a pipe; in a shared pass of built-in encoders, every side
gets one sealed copy made for the chunk, :func:`fp8lab.runtime.guard.sealed_copy`);
the harness classifies with its own array,
which no encoder ever sees. A change a user's encoder left in the
floating-point environment is collected in ``fp_env_changed``. An encoder
that raises, exits, times out or returns anything but a uint8 array of the
input's shape makes the chunk a fault, named after it.

The codes are compared and classified by :func:`fp8lab.sweeps.chunk_compare.compare_codes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from fp8lab.gates.compare import as_codes
from fp8lab.kernels.sources.wire import Foreign
from fp8lab.runtime.guard import KernelFaultError, call_kernel, call_sealed
from fp8lab.runtime.heap import keep_heap
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.chunk_compare import (
    EXAMPLES_PER_CLASS,
    ChunkResult,
    compare_codes,
    exempt_sides,
)
from fp8lab.sweeps.encoders import resolve_encoder
from fp8lab.sweeps.mismatch_classes import MISMATCH_CLASSES
from fp8lab.sweeps.range_run import DEFAULT_CHUNK

__all__ = [
    "EXAMPLES_PER_CLASS",
    "ChunkResult",
    "Merged",
    "chunk_patterns",
    "compare_chunk",
    "compare_codes",
    "exempt_sides",
    "merge_chunks",
    "side_codes",
]

Codes = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Merged:
    """Chunks merged: totals, the lowest examples of each class, the lowest chunk's fault."""

    examined: int
    by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]
    nan_code_unexplained: int
    fault: str
    fp_env_changed: tuple[str, ...] = ()
    fp_env_read: tuple[str, ...] = ()


class _BadOutputError(Exception):
    pass


def _codes(
    name: str,
    fmt: str,
    saturate: bool,
    nan: str,
    span: tuple[int, int],
    x: np.ndarray,
    sealed: bool,
) -> Codes:
    encoder = resolve_encoder(name, fmt, saturate, nan)
    if encoder.pattern_range is not None:
        return call_kernel(encoder.pattern_range, *span)
    got: object = (call_sealed if sealed else call_kernel)(encoder.encode, x)
    if isinstance(got, Foreign):
        raise _BadOutputError(f"returned {got!r}, want a uint8 ndarray of shape {x.shape}")
    try:
        got = as_codes(got, get_format(fmt))
    except ValueError as exc:
        raise _BadOutputError(str(exc)) from None
    if not isinstance(got, np.ndarray):
        raise _BadOutputError(
            f"returned {type(got).__name__}, want a uint8 ndarray of shape {x.shape}"
        )
    if got.dtype != np.uint8 or got.shape != x.shape:
        raise _BadOutputError(f"returned {got.dtype}{list(got.shape)}, want uint8{list(x.shape)}")
    return got if sealed else np.array(got, copy=True)  # a built-in's codes are its own


@lru_cache(maxsize=1)
def _offset_base() -> np.ndarray:
    return np.arange(DEFAULT_CHUNK, dtype=np.uint32)


def _offsets(n: int) -> np.ndarray:
    base = _offset_base()
    return base[:n] if n <= base.size else np.arange(n, dtype=np.uint32)


def side_codes(
    name: str,
    fmt: str,
    saturate: bool,
    nan: str,
    start: int,
    stop: int,
    x: np.ndarray,
    *,
    sealed: bool = False,
) -> Codes | str:
    """``name``'s codes for the patterns ``[start, stop)`` (``x``), or the fault line.

    ``sealed``: ``x`` is already a sealed copy (:func:`fp8lab.runtime.guard.sealed_copy`)
    that the caller does not read, so it is passed as it is, and the encoder is a
    built-in one, whose codes are a fresh array, kept without a copy.
    """
    try:
        return _codes(name, fmt, saturate, nan, (start, stop), x, sealed)
    except KernelFaultError as exc:
        return exc.line(f"encoder {name!r}")
    except _BadOutputError as exc:
        return f"encoder {name!r} {exc}"


def chunk_patterns(start: int, stop: int) -> npt.NDArray[np.float32]:
    """The float32 values of the bit patterns ``[start, stop)``."""
    return (_offsets(stop - start) + np.uint32(start)).view(np.float32)


def compare_chunk(
    a: str, b: str, fmt: str, saturate: bool, nan: str, start: int, stop: int
) -> ChunkResult:
    """Compare ``a`` and ``b`` on the float32 patterns ``[start, stop)``."""
    keep_heap()  # each chunk's arrays reuse the last one's pages (fp8lab.runtime.heap)
    spec = get_format(fmt)
    x = chunk_patterns(start, stop)
    sides = []
    for name in (a, b):
        got = side_codes(name, spec.name, saturate, nan, start, stop, x)
        if isinstance(got, str):
            return ChunkResult(0, {}, {}, 0, start, got)
        sides.append(got)
    return compare_codes(a, b, spec, saturate, nan, start, x, (sides[0], sides[1]))


def _class_rank(cls: str) -> tuple[int, str]:
    return (MISMATCH_CLASSES.index(cls) if cls in MISMATCH_CLASSES else len(MISMATCH_CLASSES), cls)


def merge_chunks(results: list[ChunkResult]) -> Merged:
    """Merge chunk results in any completion order into the same :class:`Merged`."""
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    rows: dict[str, list[dict[str, str]]] = {}
    for r in results:
        for cls, n in r.by_class.items():
            by_class[cls] = by_class.get(cls, 0) + n
        for cls, found in r.examples.items():
            rows.setdefault(cls, []).extend(found)
    examples = {
        cls: sorted(found, key=lambda row: int(row["input"], 16))[:EXAMPLES_PER_CLASS]
        for cls, found in sorted(rows.items(), key=lambda kv: _class_rank(kv[0]))
    }
    faults = sorted((r.start, r.fault) for r in results if r.fault)
    return Merged(
        examined=sum(r.examined for r in results),
        by_class=by_class,
        examples=examples,
        nan_code_unexplained=sum(r.nan_code_unexplained for r in results),
        fault=faults[0][1] if faults else "",
        fp_env_changed=tuple(sorted({c for r in results for c in r.fp_env_changed})),
        fp_env_read=tuple(sorted({c for r in results for c in r.fp_env_read})),
    )
