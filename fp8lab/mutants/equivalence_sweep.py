"""Equivalence re-check by float32 patterns: boundary probes, then the 2^32 sweep in chunks."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.mutants.probes import chunk_order, encoder_probes, scaled_probes
from fp8lab.mutants.runner import SOURCE_MODULES
from fp8lab.mutants.source import (
    SourceMutation,
    compile_module,
    load_mutant,
    mutant_tree,
    parse_module,
    source_mutations,
)
from fp8lab.runtime.heap import keep_heap
from fp8lab.runtime.parallel import run_tasks, worker_pool

__all__ = ["CHUNK", "Fn", "sweep_chunk"]

CHUNK = 1 << 22
Fn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class _Target:
    """One function pair to compare: a kernel's encoder, or its quantize at one scale."""

    key: str
    kernel: str
    mode: str  # "encoder" or "quantize"
    scale: float


def _mutation(key: str) -> SourceMutation:
    module = key.split(":", 1)[0]
    return next(m for m in source_mutations(module) if m.key == key)


def _kernels(module: Any, key: str) -> dict[str, Any]:
    built = SOURCE_MODULES[key.split(":", 1)[0]][1](module)
    return {k.name: k for k in (built if isinstance(built, list) else [built])}


# The module whose mutants run compiled (fp8lab.kernels.f32tofp8_twin): both sides'
# blocks through the twin generated from their own source.
_PORT = "fp8lab.kernels.f32tofp8"


@cache
def _sides(key: str) -> tuple[dict[str, Any], dict[str, Any], Any, Any]:
    """(original, mutant) kernels by name, the mutant's compiled lane checker and its lane.

    Cached per process (workers rebuild by key). For the port, both sides are
    fresh modules whose blocks run compiled; the checker exists when the mutant
    changed only ``_steps`` (so the rest of the module is the original's), and
    then the lane (the mutant's source tree and namespace) is given too, for
    :mod:`fp8lab.mutants.port_forks`. Otherwise both are None.
    """
    name = key.split(":", 1)[0]
    mutation = _mutation(key)
    if name == _PORT:
        from fp8lab.kernels import f32tofp8_twin as twin

        original_tree, mutated_tree = parse_module(name)[0], mutant_tree(mutation)
        original = compile_module(copy.deepcopy(original_tree), f"{name}__original")
        if twin.attach_twin(original, original_tree):
            mutant = compile_module(copy.deepcopy(mutated_tree), f"{name}__mutant")
            checker = None
            if twin.same_glue(mutated_tree, original_tree):
                checker = twin.twin_checker(mutant, mutated_tree)
            if checker is None:  # its own glue: its blocks compiled where modelled
                twin.attach_twin(mutant, mutated_tree)
                return _kernels(original, key), _kernels(mutant, key), None, None
            lane = (mutated_tree, mutant.__dict__)
            return _kernels(original, key), _kernels(mutant, key), checker, lane
    module = importlib.import_module(name)
    return _kernels(module, key), _kernels(load_mutant(mutation), key), None, None


def _pair(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(original, mutant) kernels by name (see :func:`_sides`)."""
    original, mutant, _, _ = _sides(key)
    return original, mutant


def _checker(key: str) -> Any:
    """The mutant's compiled ``first_mismatch(flat, want)``, or None (numpy only)."""
    return _sides(key)[2] if key.split(":", 1)[0] == _PORT else None


@cache
def _forks(keys: tuple[str, ...]) -> Any:
    """One compiled check of all these port mutants (:mod:`.port_forks`), or None."""
    from fp8lab.mutants.port_forks import fork_checker

    lanes = [_sides(k)[3] for k in keys]
    if any(lane is None for lane in lanes):
        return None
    original = (parse_module(_PORT)[0], importlib.import_module(_PORT).__dict__)
    return fork_checker(original, lanes)


def _fn(kernel: Any, target: _Target) -> Fn:
    if target.mode == "encoder":
        return kernel.encoder  # type: ignore[no-any-return]
    return lambda x: kernel.quantize(x, np.float32(target.scale))


def _first_difference(
    target: _Target,
    x: np.ndarray,
    wanted: dict[tuple[str, str, str, float], np.ndarray],
    start: int | None = None,
) -> str:
    """'' when both sides give the same codes on ``x``, else the first differing input.

    ``wanted`` caches the original's codes on ``x``, shared by the targets of one
    chunk. ``start``, when given, is what a compiled check already found: every
    lane before it gives the original's code on the mutant (-1: every lane).
    """
    original, mutant = (_fn(side[target.kernel], target) for side in _pair(target.key))
    with np.errstate(all="ignore"):
        want = _wanted(target, original, x, wanted)
        if start is None:
            checker = _checker(target.key) if target.mode == "encoder" else None
            flat = x.ndim == 1 and x.flags.c_contiguous and x.flags.writeable
            if checker is not None and flat and want.dtype == np.uint8 and want.shape == x.shape:
                start = int(checker(x, want))
        if start is not None:
            # every lane before ``start`` equals the original's; the mutant's own
            # encoder (elementwise, same glue) decides from there on
            if start < 0:
                return ""
            x, want = x[start:], want[start:]
        try:
            got = mutant(x)
        except Exception as exc:  # noqa: BLE001 - a mutant that raises is not equivalent
            return f"{target.kernel} {target.mode}: raised {type(exc).__name__}: {exc}"
    if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
        return f"{target.kernel} {target.mode}: returned {getattr(got, 'dtype', type(got))}"
    differ = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if not differ.size:
        return ""
    i = int(differ[0])
    word = "0x" + x.reshape(-1)[i : i + 1].tobytes()[::-1].hex()
    return (
        f"{target.kernel} {target.mode} s={target.scale!r}: input {word} gives "
        f"{got.reshape(-1)[i]:#04x}, original {want.reshape(-1)[i]:#04x}"
    )


def _wanted(
    target: _Target, original: Fn, x: np.ndarray, wanted: dict[tuple[str, str, str, float], Any]
) -> np.ndarray:
    """The original's codes on ``x`` for ``target``, computed once per chunk."""
    slot = (target.key.split(":", 1)[0], target.kernel, target.mode, target.scale)
    if slot not in wanted:
        wanted[slot] = original(x)
    return wanted[slot]  # type: ignore[no-any-return]


def _fork_starts(
    targets: tuple[_Target, ...], x: np.ndarray, wanted: dict[tuple[str, str, str, float], Any]
) -> dict[_Target, int]:
    """Where one compiled pass (:func:`_forks`) leaves each port encoder target to its encoder.

    Empty when fewer than two targets share the port's original codes or no
    such pass can be built; those targets are then checked one by one.
    """
    port = [t for t in targets if t.mode == "encoder" and _checker(t.key) is not None]
    if len(port) < 2 or len({t.kernel for t in port}) != 1:
        return {}
    if not (x.ndim == 1 and x.flags.c_contiguous and x.flags.writeable):
        return {}
    check = _forks(tuple(t.key for t in port))
    if check is None:
        return {}
    with np.errstate(all="ignore"):
        want = _wanted(port[0], _fn(_pair(port[0].key)[0][port[0].kernel], port[0]), x, wanted)
    if want.dtype != np.uint8 or want.shape != x.shape:
        return {}
    return {t: int(s) for t, s in zip(port, check(x, want), strict=True)}


def sweep_chunk(targets: tuple[_Target, ...], lo: int, hi: int) -> tuple[str, ...]:
    """Compare each target on the float32 patterns ``[lo, hi)`` (a worker task)."""
    keep_heap()  # each chunk's arrays reuse the last one's pages (fp8lab.runtime.heap)
    x = (np.arange(hi - lo, dtype=np.uint32) + np.uint32(lo)).view(np.float32)
    wanted: dict[tuple[str, str, str, float], np.ndarray] = {}
    starts = _fork_starts(targets, x, wanted)
    return tuple(_first_difference(t, x, wanted, starts.get(t)) for t in targets)


_BF16_ALL = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)


def _probe(target: _Target) -> tuple[str, int]:
    if target.mode == "encoder":
        x = encoder_probes()
        return _first_difference(target, x, {}), x.size
    x = scaled_probes(target.scale)
    miss = _first_difference(target, x, {}) or _first_difference(target, _BF16_ALL, {})
    return miss, x.size + (1 << 16)


def _sweep(
    targets: list[_Target], workers: int, pool: Executor | None, examined: dict[str, int]
) -> dict[_Target, str]:
    """Every pattern for every target of one scale, in waves; a target leaves at its first miss."""
    found: dict[_Target, str] = {}
    bounds = chunk_order(CHUNK, targets[0].scale)
    wave = max(1, workers) * 2
    for start in range(0, len(bounds), wave):
        rejected = {t.key for t in found}
        live = tuple(t for t in targets if t.key not in rejected)
        if not live:
            break
        tasks = [(live, lo, hi) for lo, hi in bounds[start : start + wave]]
        for answers in run_tasks(sweep_chunk, tasks, workers=workers, executor=pool):
            for t, answer in zip(live, answers, strict=True):
                if answer and t not in found:
                    found[t] = answer
        for t in live:
            examined[t.key] += sum(hi - lo for _, lo, hi in tasks)
    return found


def _sweep_all(
    plans: Mapping[str, list[_Target]],
    found: dict[_Target, str],
    examined: dict[str, int],
    workers: int,
    executor: Executor | None = None,
) -> None:
    rejected = {t.key for t in found}
    live = [t for targets in plans.values() for t in targets if t.key not in rejected]
    with ExitStack() as stack:
        # worker_pool: its workers die with this process and are killed on any exception
        pool = executor
        if pool is None and live and workers > 1:
            pool = stack.enter_context(worker_pool(workers))
        for scale in sorted({t.scale for t in live}):
            group = [t for t in live if t.scale == scale]
            rejected = {t.key for t in found}
            group = [t for t in group if t.key not in rejected]
            if group:
                _warm_forks(group)
                found.update(_sweep(group, workers, pool, examined))


def _warm_forks(group: list[_Target]) -> None:
    """Compile the group's shared port check here first, so workers load it from numba's cache."""
    port = [t for t in group if t.mode == "encoder" and _checker(t.key) is not None]
    if len(port) >= 2 and len({t.kernel for t in port}) == 1:
        _forks(tuple(t.key for t in port))
