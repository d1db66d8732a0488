"""Exhaustive amax sweeps: over all 2**31 non-negative float32 patterns, how often two rules split.

A scale rule is a function of one float32 amax, so each pair is counted over
every pattern in ``[0, 2**31)`` (+0 up to +NaN) by a numba loop on all cores.
The per-pattern functions are ports; ``tests/sweeps/test_amax.py``
checks each against the exact reference (:mod:`fp8lab.refs.schemes`,
:mod:`fp8lab.sweeps.log2_model`) on boundary and seeded samples. The pairs:

* ``floor-vs-rceil``: e8m0 bytes of OCP FLOOR (bits) and RCEIL, e4m3fn elements;
* ``log2-vs-bits-ceil``: vLLM UE8M0, ``exp2f(ceilf(log2f(s)))`` with a correctly
  rounded ``log2f`` against the exponent-bit ceiling, ``s = fmaxf(amax/448, 1e-10f)``;
* ``log2-vs-bits-floor``: OCP FLOOR with ``floor(log2f(amax))`` (microxcaling)
  against the exponent bits (torchao), e4m3fn elements;
* ``nvfp4-divide-vs-reciprocal``: TE's two block-scale bytes at a given ``S_enc``;
* ``nvfp4-divide-vs-fused`` and ``nvfp4-reciprocal-vs-fused``: each against TE's
  third, ``fminf(amax * (S_enc * fl(1/6)), FLT_MAX)`` (523801df7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from fp8lab.codecs.table import float32_table
from fp8lab.specs.formats import FORMATS
from fp8lab.specs.nan import NAN_POLICIES
from fp8lab.sweeps.log2_model import ceil_thresholds, floor_thresholds
from fp8lab.sweeps.range_run import EVERY_PATTERN, RangeRun

__all__ = ["NVFP4_PAIRS", "PAIRS", "SweepResult", "sweep_pair"]

ALL_POSITIVE = 1 << 31
PAIRS = (
    "floor-vs-rceil",
    "log2-vs-bits-ceil",
    "log2-vs-bits-floor",
    "nvfp4-divide-vs-reciprocal",
    "nvfp4-divide-vs-fused",
    "nvfp4-reciprocal-vs-fused",
)
NVFP4_PAIRS = PAIRS[3:]
# the compiled loop picks each nvfp4 pair's two formulas by these indices into PAIRS
_DIV_VS_RCP = PAIRS.index("nvfp4-divide-vs-reciprocal")
_RCP_VS_FUSED = PAIRS.index("nvfp4-reciprocal-vs-fused")
_CHUNK = 1 << 16  # patterns per task: its three arrays stay in cache
_EMAX_E4M3 = FORMATS["e4m3fn"].maxexp - 1  # 8


@dataclass(frozen=True)
class SweepResult:
    """Counts of one pair over ``[start, stop)``: ``differ`` of ``examined``, NaN patterns apart."""

    pair: str
    start: int
    stop: int
    examined: int
    differ: int
    differ_nan_amax: int
    first_differ: int  # lowest differing pattern, or -1
    wall_seconds: float
    s_enc: float | None = None


@numba.njit(cache=True, nogil=True)
def _floor_bits(b: int, emax: int) -> int:  # pragma: no cover - compiled
    e = (b >> 23) & 0xFF
    if e == 255:
        return 255
    u = min(max(e - 127 - emax, -127), 128)
    return u + 127


@numba.njit(cache=True, nogil=True)
def _rceil_byte(db: int) -> int:  # pragma: no cover - compiled
    e = (db >> 23) & 0xFF
    if e == 255:
        return 255
    m = db & 0x7FFFFF
    up = (m > 0x400000) if e == 0 else (m != 0)
    return e + (1 if up else 0)


@numba.njit(cache=True, nogil=True)
def _e4m3(b: int, table: np.ndarray) -> int:  # pragma: no cover - compiled
    return int(table[((b >> 16) << 1) | (1 if (b & 0xFFFF) != 0 else 0)])


@numba.njit(cache=True, nogil=True)
def _nvfp4_scales(
    pair: int, amax: np.ndarray, s_enc: np.float32, va: np.ndarray, vb: np.ndarray
) -> None:  # pragma: no cover - compiled
    """The two block-scale values (before the e4m3 cast) of ``pair`` for each amax."""
    rcp6 = np.float32(1.0) / np.float32(6.0)
    fused = s_enc * rcp6
    fmax32 = np.float32(3.4028234663852886e38)
    for i in range(amax.size):
        a = amax[i]
        v1 = (a / np.float32(6.0)) * s_enc  # divide, clamped (a NaN becomes FLT_MAX)
        v1 = v1 if v1 < fmax32 else fmax32
        v2 = (a * rcp6) * s_enc  # reciprocal, unclamped
        v3 = a * fused  # fused, clamped
        v3 = v3 if v3 < fmax32 else fmax32
        va[i] = v2 if pair == _RCP_VS_FUSED else v1
        vb[i] = v2 if pair == _DIV_VS_RCP else v3


def _sweep_chunks(
    pair: int,
    start: int,
    stop: int,
    ceil_t: np.ndarray,
    floor_t: np.ndarray,
    table: np.ndarray,
    s_enc: np.float32,
) -> np.ndarray:  # pragma: no cover - compiled
    n_chunks = (stop - start + _CHUNK - 1) // _CHUNK
    out = np.zeros((n_chunks, 3), np.int64)
    rcp448 = np.float32(1.0) / np.float32(448.0)
    for c in numba.prange(n_chunks):
        lo = start + c * _CHUNK
        n = min(lo + _CHUNK, stop) - lo
        bits = np.empty(n, np.uint32)  # the chunk's patterns, and as float32 amax
        for i in range(n):
            bits[i] = np.uint32(lo + i)
        amax = bits.view(np.float32)
        va = np.empty(n, np.float32)  # each pair's derived float32 values, by bits below
        vb = np.empty(n, np.float32)
        if pair == 0:
            for i in range(n):
                va[i] = amax[i] * rcp448
        elif pair == 1:
            for i in range(n):
                s = amax[i] / np.float32(448.0)
                va[i] = s if s >= np.float32(1e-10) else np.float32(1e-10)
        elif pair >= _DIV_VS_RCP:
            _nvfp4_scales(pair, amax, s_enc, va, vb)
        ua = va.view(np.uint32)
        ub = vb.view(np.uint32)
        first = -1
        differ = 0
        nan_differ = 0
        for i in range(n):
            p = lo + i
            if pair == 0:
                same = _floor_bits(p, _EMAX_E4M3) == _rceil_byte(int(ua[i]))
            elif pair == 1:
                sb = int(ua[i])
                e = (sb >> 23) & 0xFF
                m = sb & 0x7FFFFF
                same = e == 255 or m == 0 or m > ceil_t[e]
            elif pair == 2:
                e = (p >> 23) & 0xFF
                m = p & 0x7FFFFF
                if e == 255 or e == 0 or m < floor_t[e]:
                    same = True
                else:
                    ub_ = min(max(e - 127 - _EMAX_E4M3, -127), 128)
                    uf = min(max(e + 1 - 127 - _EMAX_E4M3, -127), 128)
                    same = ub_ == uf
            else:  # equal float32 bits cast alike; else the two e4m3 bytes decide
                same = ua[i] == ub[i] or _e4m3(int(ua[i]), table) == _e4m3(int(ub[i]), table)
            if not same:
                differ += 1
                if ((p >> 23) & 0xFF) == 255 and (p & 0x7FFFFF) != 0:
                    nan_differ += 1
                if first < 0:
                    first = p
        out[c, 0] = differ
        out[c, 1] = nan_differ
        out[c, 2] = first
    return out


# one compiled loop on all cores, and the same loop serial for a range of one chunk or less
# (a range of a few patterns would otherwise pay a thread-pool hand-off per call)
_sweep = numba.njit(parallel=True, cache=True)(_sweep_chunks)
_sweep_serial = numba.njit(cache=True)(_sweep_chunks)


def sweep_pair(pair: str, *, run: RangeRun = EVERY_PATTERN, s_enc: float = 1.0) -> SweepResult:
    """Count the amax patterns of ``run``'s range on which the two rules of ``pair`` split.

    The range defaults to all 2**31 non-negative patterns. The sweep is one
    compiled loop over this process's threads: ``run`` gives only its range.

    Raises:
        ValueError: for an unknown pair, a range outside ``[0, 2**31]``, or a
            ``run`` that names an executor or workers (the loop cannot go there).
    """
    if pair not in PAIRS:
        raise ValueError(f"unknown pair {pair!r}; choose from {', '.join(PAIRS)}")
    start, stop = run.bounds(ALL_POSITIVE, "amax pattern range")
    if run.executor is not None or run.workers is not None:
        raise ValueError("the amax sweep runs in this process's threads: give it a range only")
    table = float32_table(FORMATS["e4m3fn"], True, NAN_POLICIES["canonical"])
    t0 = time.monotonic()
    rows = (_sweep if stop - start > _CHUNK else _sweep_serial)(
        PAIRS.index(pair),
        start,
        stop,
        ceil_thresholds(),
        floor_thresholds(),
        table,
        np.float32(s_enc),
    )
    firsts = rows[:, 2][rows[:, 2] >= 0]
    return SweepResult(
        pair=pair,
        start=start,
        stop=stop,
        examined=stop - start,
        differ=int(rows[:, 0].sum()),
        differ_nan_amax=int(rows[:, 1].sum()),
        first_differ=int(firsts.min()) if firsts.size else -1,
        wall_seconds=round(time.monotonic() - t0, 3),
        s_enc=s_enc if pair in NVFP4_PAIRS else None,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m fp8lab.sweeps.amax [PAIR...]``: every pair over all 2**31 patterns.

    Prints one JSON line per sweep (the ``nvfp4-*`` pairs at ``S_enc`` 1 and
    2688); an unknown pair is one line on stderr and exit status 2.
    """
    import json
    import sys
    from dataclasses import asdict

    names = argv if argv else list(PAIRS)
    unknown = [n for n in names if n not in PAIRS]
    if unknown:
        print(
            f"amax_sweep: unknown pair {unknown[0]!r}; choose from {', '.join(PAIRS)}",
            file=sys.stderr,
        )
        return 2
    for name in names:
        for s_enc in (1.0, 2688.0) if name in NVFP4_PAIRS else (1.0,):
            print(json.dumps(asdict(sweep_pair(name, s_enc=s_enc))), flush=True)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
