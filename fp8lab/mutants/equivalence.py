"""Re-check a source mutant justified as equivalent, by the strongest exact means.

Kernels of the original and the mutated module are paired by name; their
declared fields other than the encoder (``name``, ``nan_policy``, ...)
must be equal. Then, by where the mutated site is:

* ``encoder``: the site is outside every class of the module (every site of
  ``fp8lab.kernels.f32tofp8``; the encoder functions of ``quant_static``).
  The kernel class is then the original text, ``encoder(widen(x) *
  reciprocal(s))``, reading only imported helpers and its own fields, so
  equal encoders on all 2^32 float32 patterns give equal ``quantize`` for
  every input, input dtype and scale. The encoders are compared on every
  pattern; an encoder that is the very same function object is equal.
* ``quantize``: the site is inside a kernel class (the scale path). Each
  kernel's ``quantize`` is compared on all 2^32 float32 patterns and all
  2^16 bfloat16 patterns at every G1 scale (the collapsed shard scale too).
* ``matmul``: a GEMM epilogue mutant; each kernel's ``matmul`` is compared
  bit for bit on G3's cases and on :data:`GEMM_DRAWS` seeded random shapes,
  operand bytes (NaN codes included) and scales, both output dtypes.

Boundary probes (:mod:`.probes`) run first; the sweep then visits chunks
nearest the format's range first and stops for a mutant at its first
difference. ``exhaustive=False`` runs the probes only: a screen, not a proof,
and its ``means`` says so.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any

import numpy as np

from fp8lab.gates.g1 import G1_SCALES, G1_SHARD_SCALES
from fp8lab.mutants.equivalence_sweep import (
    CHUNK,
    Fn,
    _mutation,
    _pair,
    _probe,
    _sweep_all,
    _Target,
    sweep_chunk,
)
from fp8lab.mutants.runner import SOURCE_MODULES, Equivalent
from fp8lab.mutants.source import SourceMutation, parse_module
from fp8lab.runtime.cluster import ambient_cluster
from fp8lab.runtime.parallel import default_workers

__all__ = [
    "CHUNK",
    "GEMM_DRAWS",
    "Fn",
    "Recheck",
    "recheck_equivalent",
    "recheck_equivalents",
    "sweep_chunk",
    "sweep_targets",
]

GEMM_DRAWS = 48
GEMM_SEED = 9009


@dataclass(frozen=True)
class Recheck:
    """One re-check: its verdict, by which means, and how many inputs it compared."""

    key: str
    equivalent: bool
    means: str
    examined: int
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _in_class(mutation: SourceMutation) -> bool:
    tree, _ = parse_module(mutation.module)
    return any(
        isinstance(n, ast.ClassDef) and n.lineno <= mutation.line <= (n.end_lineno or n.lineno)
        for n in ast.walk(tree)
    )


def _fields(kernel: Any) -> dict[str, Any]:
    if is_dataclass(kernel):
        return {f.name: getattr(kernel, f.name) for f in fields(kernel) if f.name != "encoder"}
    declared = ("nan_policy",)  # the named policy
    return {"name": kernel.name} | {a: getattr(kernel, a, None) for a in declared}


def _gemm_draws() -> list[tuple[np.ndarray, np.ndarray, np.float32, np.float32, str]]:
    from fp8lab.gates.g3 import g3_cases
    from fp8lab.populations.gemm import g3_operands

    out = []
    for case in g3_cases():
        a, b = g3_operands(case)
        out.append((a, b, np.float32(case.s_in), np.float32(case.s_w), case.out))
    rng = np.random.default_rng(GEMM_SEED)
    for i in range(GEMM_DRAWS):
        m, n, k = (  # M either side of vLLM's swap_ab cut (M <= 64) in turn
            int(rng.integers(1, 9) if i % 4 < 2 else rng.integers(56, 73)),
            16 * int(rng.integers(1, 4)),
            16 * int(rng.integers(1, 17)),
        )
        a = rng.integers(0, 256, (m, k), dtype=np.uint8)
        b = rng.integers(0, 256, (n, k), dtype=np.uint8)
        s_in, s_w = (np.float32(2.0 ** rng.uniform(-14, 6)) for _ in range(2))
        out.append((a, b, s_in, s_w, ("f32", "bf16")[i % 2]))
    return out


def _recheck_gemm(key: str, original: dict[str, Any], mutant: dict[str, Any]) -> Recheck:
    draws = _gemm_draws()
    means = f"matmul: G3's cases and {GEMM_DRAWS} seeded random draws (seed {GEMM_SEED})"
    examined = 0
    for name, good in original.items():
        for a, b, s_in, s_w, out in draws:
            with np.errstate(all="ignore"):
                want = good.matmul(a.copy(), b.copy(), s_in, s_w, out)
                try:
                    got = mutant[name].matmul(a.copy(), b.copy(), s_in, s_w, out)
                except Exception as exc:  # noqa: BLE001 - raising is not equivalent
                    return Recheck(key, False, means, examined, f"{name}: raised {exc!r}")
            same = isinstance(got, np.ndarray) and got.dtype == want.dtype
            if not (same and got.shape == want.shape and got.tobytes() == want.tobytes()):
                shape = f"{a.shape[0]}x{b.shape[0]}x{a.shape[1]}/{out}"
                return Recheck(key, False, means, examined, f"{name}: differs on {shape}")
            examined += want.size
    return Recheck(key, True, means, examined)


def _plan(key: str, entry: Equivalent) -> tuple[Recheck | None, list[_Target]]:
    """A verdict already reached (stale, unbuildable, fields differ), or the targets."""
    mutation = _mutation(key)
    if (mutation.original, mutation.replacement) != (entry.original, entry.replacement):
        stale = f"stale: the site now reads {mutation.original!r} -> {mutation.replacement!r}"
        return Recheck(key, False, "text", 0, stale), []
    try:
        original, mutant = _pair(key)
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot be built is not equivalent
        return Recheck(key, False, "build", 0, f"mutant could not be built: {exc!r}"), []
    if SOURCE_MODULES[mutation.module][0] == "gemm":
        return _recheck_gemm(key, original, mutant), []
    if set(original) != set(mutant):
        return Recheck(key, False, "kernels", 0, f"kernels {sorted(mutant)}"), []
    for name, good in original.items():
        if _fields(good) != _fields(mutant[name]):
            detail = f"{name}: declared {_fields(mutant[name])}, original {_fields(good)}"
            return Recheck(key, False, "fields", 0, detail), []
    by_encoder = not _in_class(mutation) and all(hasattr(k, "encoder") for k in original.values())
    if by_encoder:
        names = [n for n, k in original.items() if mutant[n].encoder is not k.encoder]
        return None, [_Target(key, n, "encoder", 1.0) for n in names]
    scales = (*G1_SCALES, float(max(np.float32(s) for s in G1_SHARD_SCALES)))
    return None, [_Target(key, n, "quantize", float(s)) for n in original for s in scales]


def sweep_targets(key: str, entry: Equivalent) -> list[_Target]:
    """What a re-check of ``entry`` compares over all 2**32 patterns (empty: decided without)."""
    return _plan(key, entry)[1]


def _means(targets: list[_Target], exhaustive: bool) -> str:
    if not targets:
        return "encoder: every kernel's encoder is the original function object"
    mode = targets[0].mode
    what = (
        "all 2^32 float32 patterns" if exhaustive else "boundary probes only (a screen, no proof)"
    )
    if mode == "encoder":
        return f"encoder: {what}, {len({t.kernel for t in targets})} kernel(s)"
    scales = sorted({t.scale for t in targets})
    return f"quantize: {what} and all 2^16 bfloat16 patterns at {len(scales)} scales"


def recheck_equivalents(
    entries: Mapping[str, Equivalent],
    *,
    exhaustive: bool = True,
    workers: int | None = None,
    executor: Executor | None = None,
) -> dict[str, Recheck]:
    """Re-check every justified entry; the sweeps of all entries share chunks.

    Args:
        entries: justified equivalents by key.
        exhaustive: sweep every pattern after the probes (False: probes only).
        workers: processes for the sweep (default one per core; 1 runs here),
            or the workers of ``executor``.
        executor: run the sweep's chunks here (e.g. a dask cluster's,
            :mod:`fp8lab.runtime.cluster`) instead of a local process pool.
    """
    done: dict[str, Recheck] = {}
    plans: dict[str, list[_Target]] = {}
    for key, entry in entries.items():
        verdict, targets = _plan(key, entry)
        if verdict is not None:
            done[key] = verdict
        else:
            plans[key] = targets
    found: dict[_Target, str] = {}
    examined: dict[str, int] = dict.fromkeys(plans, 0)
    for targets in plans.values():
        for t in targets:  # a key leaves at its first miss
            miss, n = _probe(t)
            examined[t.key] += n
            if miss:
                found[t] = miss
                break
    if exhaustive and executor is None and workers is None and (ambient := ambient_cluster()):
        executor, workers = ambient.executor, ambient.workers
    if exhaustive:
        _sweep_all(plans, found, examined, workers or default_workers(), executor)
    for key, targets in plans.items():
        misses = [found[t] for t in targets if t in found]
        done[key] = Recheck(
            key, not misses, _means(targets, exhaustive), examined[key], *misses[:1]
        )
    return {k: done[k] for k in entries}


def recheck_equivalent(key: str, entry: Equivalent, **options: Any) -> Recheck:
    """Re-check one entry (options as :func:`recheck_equivalents`)."""
    return recheck_equivalents({key: entry}, **options)[key]
