"""Compare two encoders on every float32 bit pattern, in chunks, on all cores.

Each chunk materialises its patterns, runs both encoders and classifies any
disagreement (:mod:`fp8lab.exhaustive.classify`). Workers are separate
processes that resolve the encoders by name, so ``MODULE:FUNC`` encoders
work as long as the module is importable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from fp8lab.exhaustive.classify import MISMATCH_CLASSES, classify_mismatches
from fp8lab.exhaustive.encoders import resolve_encoder
from fp8lab.formats import get_format
from fp8lab.parallel import default_workers, run_tasks
from fp8lab.progress import Progress

__all__ = [
    "ALL_PATTERNS",
    "ChunkResult",
    "ExhaustiveRecord",
    "compare_chunk",
    "default_workers",
    "run_exhaustive",
]

ALL_PATTERNS = 1 << 32
DEFAULT_CHUNK = 1 << 22
EXAMPLES_PER_CLASS = 5


@dataclass(frozen=True)
class ChunkResult:
    """Counts from one chunk of patterns."""

    examined: int
    by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]


@dataclass(frozen=True)
class ExhaustiveRecord:
    """The verdict of comparing encoders ``a`` and ``b`` over a pattern range."""

    a: str
    b: str
    format: str
    saturate: bool
    nan: str
    start: int
    stop: int
    examined: int
    mismatches: int
    nan_code_mismatches: int
    mismatches_by_class: dict[str, int]
    examples: dict[str, list[dict[str, str]]]
    policy_notes: dict[str, str]
    chunks: int
    workers: int
    wall_seconds: float
    status: str = field(default="")

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def _codes(
    name: str, fmt: str, saturate: bool, nan: str, start: int, stop: int, x: np.ndarray
) -> np.ndarray:
    encoder = resolve_encoder(name, fmt, saturate, nan)
    if encoder.pattern_range is not None:
        return encoder.pattern_range(start, stop)
    got = encoder.encode(x)
    if not isinstance(got, np.ndarray) or got.dtype != np.uint8 or got.shape != x.shape:
        raise TypeError(
            f"encoder {name!r} returned {getattr(got, 'dtype', type(got))}"
            f"{getattr(got, 'shape', '')}, want uint8{x.shape}"
        )
    return got


@lru_cache(maxsize=1)
def _offset_base() -> np.ndarray:
    return np.arange(DEFAULT_CHUNK, dtype=np.uint32)


def _offsets(n: int) -> np.ndarray:
    base = _offset_base()
    return base[:n] if n <= base.size else np.arange(n, dtype=np.uint32)


def compare_chunk(
    a: str, b: str, fmt: str, saturate: bool, nan: str, start: int, stop: int
) -> ChunkResult:
    """Compare ``a`` and ``b`` on the float32 patterns ``[start, stop)``."""
    x = (_offsets(stop - start) + np.uint32(start)).view(np.float32)
    codes_a = _codes(a, fmt, saturate, nan, start, stop, x)
    codes_b = _codes(b, fmt, saturate, nan, start, stop, x)
    differ = np.flatnonzero(codes_a != codes_b)
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    examples: dict[str, list[dict[str, str]]] = {}
    if differ.size:
        classes = classify_mismatches(x[differ], codes_a[differ], codes_b[differ], get_format(fmt))
        for k, cls in enumerate(MISMATCH_CLASSES):
            hits = differ[classes == k]
            by_class[cls] = int(hits.size)
            if hits.size:
                examples[cls] = [
                    {
                        "input": f"0x{start + int(i):08x}",
                        a: f"{codes_a[i]:#04x}",
                        b: f"{codes_b[i]:#04x}",
                    }
                    for i in hits[:EXAMPLES_PER_CLASS]
                ]
    return ChunkResult(stop - start, by_class, examples)


def _merge(results: list[ChunkResult]) -> tuple[int, dict[str, int], dict[str, list[Any]]]:
    by_class = dict.fromkeys(MISMATCH_CLASSES, 0)
    examples: dict[str, list[Any]] = {}
    for r in results:
        for cls, n in r.by_class.items():
            by_class[cls] += n
        for cls, rows in r.examples.items():
            examples.setdefault(cls, [])
            examples[cls] = (examples[cls] + rows)[:EXAMPLES_PER_CLASS]
    return sum(r.examined for r in results), by_class, examples


def run_exhaustive(
    a: str,
    b: str,
    fmt: str,
    *,
    saturate: bool,
    nan: str = "canonical",
    start: int = 0,
    stop: int = ALL_PATTERNS,
    chunk: int = DEFAULT_CHUNK,
    workers: int | None = None,
    executor: Executor | None = None,
    progress: Callable[[str, int], Progress] | None = None,
) -> ExhaustiveRecord:
    """Compare encoders ``a`` and ``b`` on every float32 pattern in ``[start, stop)``.

    Args:
        a: encoder name (see ``BUILTIN_ENCODERS``) or ``MODULE:FUNC``.
        b: the other encoder.
        fmt: format name.
        saturate: overflow policy both sides are asked for.
        nan: NaN policy both sides are asked for.
        start: first bit pattern.
        stop: one past the last bit pattern; the default covers all 2**32.
        chunk: patterns per task.
        workers: processes; default one per core; 1 runs in this process.
        executor: run the chunks here instead (any concurrent.futures Executor).
        progress: factory ``(label, total) -> Progress``; None is silent.

    Raises:
        EncoderError: if an encoder cannot be resolved (checked before any work).
        ValueError: for an empty or out-of-range pattern range.
    """
    if not 0 <= start < stop <= ALL_PATTERNS:
        raise ValueError(f"pattern range [{start:#x}, {stop:#x}) is empty or outside 2**32")
    spec = get_format(fmt)
    notes = {n: resolve_encoder(n, spec.name, saturate, nan).policy_note for n in (a, b)}
    bounds = [(lo, min(lo + chunk, stop)) for lo in range(start, stop, chunk)]
    workers = workers or default_workers()
    report = (
        progress(f"exhaustive {a} vs {b} {spec.name} sat={saturate}", len(bounds))
        if progress
        else None
    )
    t0 = time.monotonic()
    args = [(a, b, spec.name, saturate, nan, lo, hi) for lo, hi in bounds]
    results = run_tasks(compare_chunk, args, workers=workers, executor=executor, report=report)
    examined, by_class, examples = _merge(results)
    nan_codes = by_class.pop("nan_code")
    mismatches = sum(by_class.values())
    status = "PASS" if examined == stop - start and examined > 0 and mismatches == 0 else "FAIL"
    return ExhaustiveRecord(
        a=a,
        b=b,
        format=spec.name,
        saturate=saturate,
        nan=nan,
        start=start,
        stop=stop,
        examined=examined,
        mismatches=mismatches,
        nan_code_mismatches=nan_codes,
        mismatches_by_class=by_class,
        examples=examples,
        policy_notes=notes,
        chunks=len(bounds),
        workers=workers,
        wall_seconds=round(time.monotonic() - t0, 3),
        status=status,
    )
