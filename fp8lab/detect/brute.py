"""Brute force: every float32 input through both kernels at one scale.

Chunks of bit patterns run in separate processes, which resolve the kernels by
name (:func:`fp8lab.detect.pair.resolve_kernel`), so ``MODULE:FUNC`` kernels
work when the module is importable there. A QuantKernel object is pickled.
Chunks are pure functions of (kernels, format, scale, range), so any executor
may run them, a dask cluster's included (:mod:`fp8lab.runtime.cluster`); each result
names its range, and the record's ``covered`` is proven from them.

Two engines compute a chunk. The built-in ``reciprocal`` / ``divide`` pair,
given by name, runs in one compiled loop (:mod:`fp8lab.detect.fused`; locally
on threads of this process, since it releases the GIL); any other pair, or
``engine="numpy"``, runs through numpy (:func:`exposing_in_chunk`, the fused
loop's twin). Both give the same record except ``wall_seconds``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from fp8lab.detect.fused import BRUTE_ENGINES, exposing_fused, fused_applies
from fp8lab.detect.midpoints import midpoint_table
from fp8lab.detect.pair import kernel_name, quantize_codes, resolve_kernel
from fp8lab.detect.records import ExposureRecord, classify_inputs
from fp8lab.kernels import QuantKernel, validate_scale
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.runtime.heap import keep_heap
from fp8lab.runtime.parallel import WorkerLostError, run_tasks
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.coverage import covered_ranges
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun

__all__ = ["BRUTE_ENGINES", "brute_force", "exposing_in_chunk", "use_fused"]

Kernel = str | QuantKernel


def exposing_in_chunk(
    a: Kernel, b: Kernel, fmt: str, scale: float, start: int, stop: int
) -> npt.NDArray[np.uint32]:
    """Patterns in ``[start, stop)`` where ``a`` and ``b`` emit different bytes.

    Raises:
        KernelFaultError: if a kernel misbehaves (:func:`fp8lab.detect.pair.quantize_codes`).
    """
    s = np.float32(scale)
    ka, kb = resolve_kernel(a, fmt), resolve_kernel(b, fmt)
    bits = np.arange(start, stop, dtype=np.uint32)
    x = bits.view(np.float32)
    differ = quantize_codes(ka, x, s) != quantize_codes(kb, x, s)
    out: npt.NDArray[np.uint32] = bits[differ]
    return out


def _chunk(
    a: Kernel, b: Kernel, fmt: str, scale: float, fused: bool, start: int, stop: int
) -> tuple[int, int, npt.NDArray[np.uint32]]:
    """``(start, stop, exposing)``: the chunk names the range it examined.

    The range comes last, as in every chunked job here (``fp8lab.sweeps.coverage``'s
    meta tests replay and shorten chunks by rewriting those two arguments).
    """
    if fused:
        return start, stop, exposing_fused(a, b, fmt, scale, start, stop)
    keep_heap()  # each chunk's arrays reuse the last one's pages (fp8lab.runtime.heap)
    return start, stop, exposing_in_chunk(a, b, fmt, scale, start, stop)


def use_fused(a: Kernel, b: Kernel, engine: str) -> bool:
    """Whether brute force runs the fused loop for ``a`` vs ``b`` under ``engine``.

    Args:
        a: a kernel name or object.
        b: the other.
        engine: ``"auto"`` (fused for the built-in pair by name, numpy otherwise),
            ``"fused"`` or ``"numpy"``.

    Raises:
        ValueError: for an unknown engine, or ``"fused"`` for a pair it cannot run.
    """
    if engine not in BRUTE_ENGINES:
        raise ValueError(f"unknown brute-force engine {engine!r}; choose from {BRUTE_ENGINES}")
    if engine == "fused" and not fused_applies(a, b):
        raise ValueError(
            "the fused engine runs only the built-in reciprocal,divide kernels given by name; "
            "use engine numpy (or auto) for other kernels"
        )
    return engine != "numpy" and fused_applies(a, b)


def brute_force(
    scale: float,
    a: Kernel = "reciprocal",
    b: Kernel = "divide",
    *,
    fmt: str = "e4m3fn",
    run: RangeRun = EVERY_PATTERN,
    engine: str = "auto",
) -> ExposureRecord:
    """Count the float32 inputs of ``run``'s range where ``a`` and ``b`` differ.

    Every pattern of the range is examined, so the record is ``complete``.

    Args:
        scale: the static scale (validated, used as float32).
        a: reference kernel: name (``reciprocal``, ``divide``, ``MODULE:FUNC``) or object.
        b: the other kernel.
        fmt: format the built-in kernels encode to.
        run: the patterns (default all 2**32), chunks and where they run; the
            fused engine runs its workers as threads of this process.
        engine: ``"auto"``, ``"fused"`` or ``"numpy"`` (:func:`use_fused`); the
            record is the same whichever runs, except ``wall_seconds``.

    Raises:
        ValueError: for an invalid scale, an empty or out-of-range pattern range,
            or an engine that cannot run this pair.
        KernelError: for an unresolvable kernel (checked before any work).
        KernelFaultError: if a kernel raised, exited or returned no uint8 codes of
            x's shape, or a worker process died.
        CoverageError: if the chunks that came back do not tile the range exactly once.
    """
    s = validate_scale(scale)
    start, stop = run.bounds()
    spec = get_format(fmt)
    names = (kernel_name(resolve_kernel(a, spec.name)), kernel_name(resolve_kernel(b, spec.name)))
    fused = use_fused(a, b, engine)
    tasks = [(a, b, spec.name, float(s), fused, lo, hi) for lo, hi in run.chunks([(start, stop)])]
    place = run.placement()
    workers, executor = place.workers, place.executor
    report = run.reporter(f"brute {names[0]} vs {names[1]} s={float(s)!r}", len(tasks))
    t0 = time.monotonic()
    try:
        if fused and executor is None and workers > 1:
            with ThreadPoolExecutor(workers) as threads:  # the compiled loop releases the GIL
                done = run_tasks(_chunk, tasks, workers=workers, executor=threads, report=report)
        else:
            done = run_tasks(_chunk, tasks, workers=workers, executor=executor, report=report)
    except WorkerLostError as exc:
        raise KernelFaultError(
            f"a worker process died while running {names[0]!r} vs {names[1]!r} ({exc})"
        ) from None
    covered = covered_ranges(((lo, hi) for lo, hi, _ in done), start, stop)
    found = [bits for _, _, bits in done]
    bits = np.sort(np.concatenate(found)) if found else np.zeros(0, np.uint32)
    return ExposureRecord(
        method="brute",
        a=names[0],
        b=names[1],
        format=spec.name,
        scale=float(s),
        scale_hex=float(s).hex(),
        start=start,
        stop=stop,
        examined=sum(hi - lo for lo, hi, _ in done),
        count=int(bits.size),
        inputs=tuple(f"0x{int(v):08x}" for v in bits),
        classes=classify_inputs(bits, s, midpoint_table(spec.name)),
        wall_seconds=round(time.monotonic() - t0, 3),
        complete=True,
        covered=covered,
    )
