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
def _sides(key: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """(original, mutant) kernels by name and the mutant's compiled lane checker (or None).

    Cached per process (workers rebuild by key). For the port, both sides are
    fresh modules whose blocks run compiled; the checker exists when the mutant
    changed only ``_steps`` (so the rest of the module is the original's).
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
            return _kernels(original, key), _kernels(mutant, key), checker
    module = importlib.import_module(name)
    return _kernels(module, key), _kernels(load_mutant(mutation), key), None


def _pair(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(original, mutant) kernels by name (see :func:`_sides`)."""
    original, mutant, _ = _sides(key)
    return original, mutant


def _checker(key: str) -> Any:
    """The mutant's compiled ``first_mismatch(flat, want)``, or None (numpy only)."""
    return _sides(key)[2] if key.split(":", 1)[0] == _PORT else None


def _fn(kernel: Any, target: _Target) -> Fn:
    if target.mode == "encoder":
        return kernel.encoder  # type: ignore[no-any-return]
    return lambda x: kernel.quantize(x, np.float32(target.scale))


def _first_difference(
    target: _Target, x: np.ndarray, wanted: dict[tuple[str, str, str, float], np.ndarray]
) -> str:
    """'' when both sides give the same codes on ``x``, else the first differing input.

    ``wanted`` caches the original's codes on ``x``, shared by the targets of one chunk.
    """
    original, mutant = (_fn(side[target.kernel], target) for side in _pair(target.key))
    module = target.key.split(":", 1)[0]
    slot = (module, target.kernel, target.mode, target.scale)
    with np.errstate(all="ignore"):
        if slot not in wanted:
            wanted[slot] = original(x)
        want = wanted[slot]
        checker = _checker(target.key) if target.mode == "encoder" else None
        flat = x.ndim == 1 and x.flags.c_contiguous and x.flags.writeable
        if checker is not None and flat and want.dtype == np.uint8 and want.shape == x.shape:
            # every lane before ``start`` equals the original's; the mutant's own
            # encoder (elementwise, same glue) decides from there on
            start = int(checker(x, want))
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


def sweep_chunk(targets: tuple[_Target, ...], lo: int, hi: int) -> tuple[str, ...]:
    """Compare each target on the float32 patterns ``[lo, hi)`` (a worker task)."""
    x = (np.arange(hi - lo, dtype=np.uint32) + np.uint32(lo)).view(np.float32)
    wanted: dict[tuple[str, str, str, float], np.ndarray] = {}
    return tuple(_first_difference(t, x, wanted) for t in targets)


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
                found.update(_sweep(group, workers, pool, examined))
