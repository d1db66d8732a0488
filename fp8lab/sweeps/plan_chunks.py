"""One chunk of several exhaustive proofs at once: each encoder side evaluated once.

Proofs of a plan often share a side: the scan reference for one format and
policy, or the fast codec, appears in several. :func:`compare_plan_chunk`
materialises the chunk's patterns once, hands every side one sealed copy of
them (:func:`fp8lab.runtime.guard.sealed_copy`; the comparison reads its own),
evaluates each distinct side once
(lazily, in plan order, so a side after a faulting one is not run, as in
:func:`fp8lab.sweeps.exhaustive_chunks.compare_chunk`) and compares every proof
from those codes. Each proof's :class:`ChunkResult` is the one ``compare_chunk``
returns for it.

A side is its encoder name, format, overflow policy and NaN policy; an encoder
with a fixed NaN policy (``fixed_nan``, :mod:`fp8lab.sweeps.encoders`) ignores
the one asked for, so its codes are shared across NaN policies. Only built-in
encoders share: a ``MODULE:FUNC`` encoder runs in its own process with its own
findings, and its proofs stay on :func:`fp8lab.sweeps.exhaustive.run_exhaustive`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.runtime.guard import sealed_copy
from fp8lab.specs.formats import get_format
from fp8lab.sweeps.encoders import BUILTIN_ENCODERS, resolve_encoder
from fp8lab.sweeps.exhaustive_chunks import ChunkResult, chunk_patterns, compare_codes, side_codes

__all__ = ["PlanProof", "Side", "compare_plan_chunk", "shareable", "side_key"]

PlanProof = tuple[str, str, str, bool, str]  # a, b, format, saturate, nan
Side = tuple[str, str, bool, str]  # encoder, format, saturate, nan (or "fixed")


def shareable(proof: PlanProof) -> bool:
    """True when both sides are built-in encoders, so their codes may be shared."""
    return proof[0] in BUILTIN_ENCODERS and proof[1] in BUILTIN_ENCODERS


def side_key(name: str, fmt: str, saturate: bool, nan: str) -> Side:
    """What ``name``'s codes depend on: the NaN policy only if the encoder honours it."""
    fixed = resolve_encoder(name, fmt, saturate, nan).fixed_nan
    return (name, fmt, saturate, nan if fixed is None else "fixed")


def compare_plan_chunk(
    proofs: tuple[PlanProof, ...], start: int, stop: int
) -> tuple[ChunkResult, ...]:
    """Each of ``proofs`` compared on the float32 patterns ``[start, stop)``, in order."""
    x = chunk_patterns(start, stop)
    seen = sealed_copy(x)
    codes: dict[Side, npt.NDArray[np.uint8] | str] = {}
    out = []
    for a, b, fmt, saturate, nan in proofs:
        spec = get_format(fmt)
        sides = []
        for name in (a, b):
            key = side_key(name, spec.name, saturate, nan)
            if key not in codes:
                codes[key] = side_codes(
                    name, spec.name, saturate, nan, start, stop, seen, sealed=True
                )
            got = codes[key]
            if isinstance(got, str):
                out.append(ChunkResult(0, {}, {}, 0, start, got))
                break
            sides.append(got)
        else:
            out.append(compare_codes(a, b, spec, saturate, nan, start, x, (sides[0], sides[1])))
    return tuple(out)
