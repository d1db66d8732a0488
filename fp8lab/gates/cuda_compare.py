"""The comparisons behind G2 and G2h: CPU quant against a CUDA build; a CUDA encoder exhaustively.

* Quant cases: the G1 population at each G1 scale, in each input dtype; the
  CPU kernel and the CUDA build each get a private read-only copy of the same
  words (``fp8lab.runtime.guard.call_kernel``) and must agree byte for byte, NaN inputs
  included (one assertion per case). Vacuity guard: half or more of the CPU
  codes zero in magnitude fails the case.
* Encoder cases: a CUDA encoder (SATFINITE) on every float32 pattern of a
  range against the scan reference (``fp8lab.refs.scan``, saturating,
  canonical NaN). Two assertions per range: every non-NaN pattern gives the
  reference byte; every NaN pattern gives a NaN code, and, under
  ``nan_rule="exact"``, the canonical one. NaN patterns whose code is not the
  canonical one are counted (``nan_code_mismatches``) either way. The
  reference is expanded on the backend's own array module (numpy or cupy)
  from its runs, so a device compares on the device.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import ml_dtypes
import numpy as np

from fp8lab.gates.compare import as_codes
from fp8lab.gates.records import CaseResult, GateStatus, Offender, mostly_zero, screen
from fp8lab.kernels.protocols import QuantKernel
from fp8lab.populations import g1_population
from fp8lab.refs.scan import ScanPolicy, scan_pattern_range, scan_pattern_runs
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.formats import FORMATS

__all__ = [
    "ALL_PATTERNS",
    "CUDA_GATE_CPU_KERNEL",
    "ENCODER_CHUNK",
    "NAN_RANGES",
    "EncoderBackend",
    "NanTally",
    "all_encoder_cases",
    "builtin_kernels",
    "encoder_cases",
    "quant_cases",
    "verdict",
]

ALL_PATTERNS = ((0, 1 << 32),)
CUDA_GATE_CPU_KERNEL = "upstream"  # fp8lab's CUDA source is upstream's quant: like with like
ENCODER_CHUNK = 1 << 26
NAN_RANGES = ((0x7F80_0001, 0x8000_0000), (0xFF80_0001, 1 << 32))
_SAT_CANONICAL = ScanPolicy(saturate=True, keep_nan_sign=False)
_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def builtin_kernels(**_: Any) -> list[QuantKernel]:
    """The CPU kernel G2 and G2h hold fp8lab's CUDA build to, with no ``--kernel``: upstream."""
    from fp8lab.kernels.quant import BUILTIN_KERNELS

    return [BUILTIN_KERNELS[CUDA_GATE_CPU_KERNEL]]


class EncoderBackend(Protocol):
    """A CUDA build's pattern-range encoder and the array module its codes live in."""

    @property
    def xp(self) -> Any:
        """numpy, or cupy for a device."""
        ...

    def encode_range(self, fmt: str, start: int, stop: int) -> Any:
        """Codes of every float32 pattern in [start, stop), as an ``xp`` uint8 array."""
        ...


@dataclass
class NanTally:
    """What NaN patterns became: the canonical NaN code, a NaN code with the sign bit, no NaN."""

    canonical: int = 0
    signed: int = 0
    not_nan: int = 0

    def to_dict(self) -> dict[str, int]:
        """Counts by name, for a record."""
        return {
            "nan->canonical": self.canonical,
            "nan->signed": self.signed,
            "nan->not-nan": self.not_nan,
        }


def _quantize(kernel: QuantKernel, x: np.ndarray, scale: float) -> object:
    return kernel.quantize(x, scale)


def _codes(raw: object, shape: tuple[int, ...], who: str) -> np.ndarray:
    try:
        raw = as_codes(raw, FORMATS["e4m3fn"])
    except ValueError as exc:
        raise KernelFaultError(f"{who}: {exc}") from None
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.shape != shape:
        kind = f"{getattr(raw, 'dtype', type(raw).__name__)}{getattr(raw, 'shape', '')}"
        raise KernelFaultError(f"{who} returned {kind}, want uint8{shape}")
    return np.array(raw, np.uint8, copy=True)


def quant_cases(
    cpu: QuantKernel,
    cuda: QuantKernel,
    scales: Sequence[float],
    input_dtypes: Sequence[str],
    seed: int,
    offenders: list[Offender],
    max_offenders: int,
) -> list[CaseResult]:
    """One case per scale and input dtype: ``cpu`` against ``cuda``, byte for byte."""
    cases = []
    for scale in scales:
        population = g1_population(scale, seed=seed)
        for dtype in input_dtypes:
            name = f"quant s={scale!r}/{dtype}"
            x = population.words.astype(_DTYPES[dtype])
            try:
                want = _codes(call_kernel(_quantize, cpu, x, scale), x.shape, cpu.name)
                got = _codes(call_kernel(_quantize, cuda, x, scale), x.shape, cuda.name)
            except KernelFaultError as exc:
                cases.append(CaseResult(name, x.size, 1, 1, 0, 0, 0.0, exc.reason))
                continue
            bad = np.flatnonzero(got != want)
            for i in bad[: max(0, max_offenders - len(offenders))]:
                cls = population.classes[int(i)].value
                word = "0x" + x[i : i + 1].tobytes()[::-1].hex()
                offenders.append(
                    Offender(name, cls, int(i), word, f"{got[i]:#04x}", f"{want[i]:#04x}")
                )
            nonzero = float(np.mean((want & 0x7F) != 0))
            cases.append(CaseResult(name, x.size, 1, int(bad.size > 0), int(bad.size), 0, nonzero))
    return cases


def _host(a: Any) -> np.ndarray:
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _split(start: int, stop: int, chunk: int) -> list[tuple[int, int, bool]]:
    """[start, stop) cut at the NaN ranges' edges and into chunks; each piece says if it is NaN."""
    edges = sorted({start, stop, *(e for r in NAN_RANGES for e in r if start < e < stop)})
    pieces = []
    for lo, hi in itertools.pairwise(edges):
        nan = any(a <= lo and hi <= b for a, b in NAN_RANGES)
        pieces += [(p, min(p + chunk, hi), nan) for p in range(lo, hi, chunk)]
    return pieces


def _reference(xp: Any, start: int, stop: int, fmt: str) -> Any:
    if xp is np:
        return scan_pattern_range(start, stop, FORMATS[fmt], _SAT_CANONICAL)
    firsts, codes = scan_pattern_runs(FORMATS[fmt], _SAT_CANONICAL)
    patterns = xp.arange(start, stop, dtype=xp.int64)
    return xp.asarray(codes)[xp.searchsorted(xp.asarray(firsts), patterns, side="right") - 1]


def encoder_cases(
    backend: EncoderBackend,
    fmt: str,
    ranges: Sequence[tuple[int, int]],
    nan_rule: str,
    offenders: list[Offender],
    max_offenders: int,
    tally: NanTally,
    chunk: int = ENCODER_CHUNK,
) -> list[CaseResult]:
    """One case per pattern range: ``backend``'s ``fmt`` encoder against the scan reference.

    Raises:
        ValueError: for a ``nan_rule`` other than ``"exact"`` or ``"nan-code"``.
    """
    if nan_rule not in ("exact", "nan-code"):
        raise ValueError(f"nan_rule must be 'exact' or 'nan-code', not {nan_rule!r}")
    spec, xp = FORMATS[fmt], backend.xp
    canonical = spec.canonical_nan_code
    nan_table = xp.asarray(np.array([spec.is_nan_code(c) for c in range(256)], np.bool_))
    cases = []
    for start, stop in ranges:
        name = f"{fmt} patterns [{start:#010x}, {stop:#011x})"
        mismatches = nan_codes = nonzero = 0
        failed = [False, False]
        try:
            for lo, hi, is_nan in _split(start, stop, chunk):
                got = backend.encode_range(fmt, lo, hi)
                want = _reference(xp, lo, hi, fmt)
                differ = got != want
                nonzero += int(xp.count_nonzero((got & 0x7F) != 0))
                if is_nan:
                    is_nan_code = nan_table[got]
                    not_nan = int(xp.count_nonzero(~is_nan_code))
                    odd_nan = int(xp.count_nonzero(differ & is_nan_code))
                    tally.not_nan += not_nan
                    tally.signed += int(xp.count_nonzero(is_nan_code & (got >= 0x80)))
                    tally.canonical += int(xp.count_nonzero(got == canonical))
                    nan_codes += odd_nan
                    mismatches += not_nan
                    bad = differ if nan_rule == "exact" else ~is_nan_code
                    failed[1] |= bool(int(xp.count_nonzero(bad)))
                else:
                    bad = differ
                    mismatches += int(xp.count_nonzero(bad))
                    failed[0] |= bool(int(xp.count_nonzero(bad)))
                room = max(0, max_offenders - len(offenders))
                for i in _host(xp.flatnonzero(bad)[:room]) if room else ():
                    g, w = int(_host(got[int(i)])), int(_host(want[int(i)]))
                    cls = "nan" if is_nan else "pattern"
                    offenders.append(
                        Offender(
                            name, cls, lo + int(i), f"{lo + int(i):#010x}", f"{g:#04x}", f"{w:#04x}"
                        )
                    )
        except Exception as exc:  # noqa: BLE001 - a backend failure is this case's FAIL
            cases.append(
                CaseResult(name, stop - start, 2, 2, 0, 0, 0.0, f"{type(exc).__name__}: {exc}")
            )
            continue
        words = stop - start
        cases.append(
            CaseResult(name, words, 2, sum(failed), mismatches, nan_codes, nonzero / max(words, 1))
        )
    return cases


def all_encoder_cases(
    backend: EncoderBackend,
    encoders: Sequence[tuple[str, str]],
    ranges: Sequence[tuple[int, int]],
    offenders: list[Offender],
    max_offenders: int,
    chunk: int = ENCODER_CHUNK,
) -> tuple[list[CaseResult], dict[str, int]]:
    """:func:`encoder_cases` for each ``(format, nan_rule)``, and what NaN patterns became.

    The first format's NaN counts keep their plain names ("nan->canonical"...);
    the others' are prefixed with the format ("e5m2 nan->canonical"...).
    """
    cases: list[CaseResult] = []
    measured: dict[str, int] = {}
    for i, (fmt, nan_rule) in enumerate(encoders):
        tally = NanTally()
        cases += encoder_cases(
            backend, fmt, ranges, nan_rule, offenders, max_offenders, tally, chunk
        )
        prefix = "" if i == 0 else f"{fmt} "
        measured |= {prefix + key: n for key, n in tally.to_dict().items()}
    return cases, measured


def verdict(quant: Sequence[CaseResult], encoder: Sequence[CaseResult]) -> tuple[GateStatus, str]:
    """FAIL on an error, a vacuous quant case, a failed assertion, or nothing examined."""
    cases = [*quant, *encoder]
    early = screen(cases, vacuous=mostly_zero(quant), what="CPU codes mostly zero")
    if early:
        return early
    bad_q = [c for c in quant if c.assertions_failed]
    bad_e = [c for c in encoder if c.assertions_failed]
    reasons = []
    if bad_q:
        reasons.append(f"CPU and CUDA quant differ in {len(bad_q)} of {len(quant)} cases")
    if bad_e:
        reasons.append(f"the CUDA encoder differs from the scan reference in {len(bad_e)} ranges")
    return (GateStatus.FAIL, "; ".join(reasons)) if reasons else (GateStatus.PASS, "")
