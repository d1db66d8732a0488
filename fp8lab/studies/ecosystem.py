"""The ecosystem notebook's rows: third-party quantizers under their own rule and a spec's.

:data:`ECOSYSTEM_ROWS` is data: one :class:`LibraryRow` per library quantizer
(library, GQ scheme, kernel ``MODULE:FUNC``, the rule fp8lab names after the
library, and the nearest spec rule of that scheme). :func:`ecosystem_row` runs
the kernel once, isolated in a child process with torch tensors
(:class:`~fp8lab.kernels.sources.isolated.KernelHost`), on GQ's population;
infers the rule it follows (:func:`~fp8lab.gates.rule_inference.infer_rule`);
gives GQ's verdict on those same outputs under the library's rule and under
the spec rule; names the axes on which the two declarations differ
(:func:`~fp8lab.gates.rule_candidates.differing_axes`); and counts, over a
range of float32 amax patterns, where the two rules store different scales
(:func:`amax_split`; NVFP4: :mod:`~fp8lab.studies.ecosystem_nvfp4`). A library
that does not import gives ``absent`` with the install line; a rule not
declared, ``rule not in this build``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fp8lab.gates.gq import GQ_RULES, GqCall, gq_calls, run_gq
from fp8lab.gates.records import GateResult
from fp8lab.gates.rule_candidates import differing_axes
from fp8lab.gates.rule_inference import infer_rule, record_outputs
from fp8lab.kernels.scheme import amax_scales
from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
from fp8lab.runtime.extras import absent, install_line
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.runtime.heap import keep_heap
from fp8lab.runtime.parallel import run_tasks
from fp8lab.specs.scale_rules import (
    RULES,
    Apply,
    E8m0NanBlock,
    E8m0Zero,
    ScaleRule,
    Storage,
    get_rule,
)
from fp8lab.studies import ecosystem_nvfp4 as nv
from fp8lab.studies.amax_split_compiled import COMPILED, split_counts_compiled
from fp8lab.sweeps.range_run import RangeRun, sharing_workers

__all__ = [
    "ALL_NON_NEGATIVE",
    "ECOSYSTEM_ROWS",
    "FULL_SPLITS",
    "IMPORT_NAMES",
    "AmaxSplit",
    "LibraryRow",
    "SPLIT_ENGINES",
    "amax_split",
    "axis_rows",
    "ecosystem_row",
    "ecosystem_table",
    "library_absent",
    "library_version",
    "missing_rules",
    "smoke_rows",
    "split_unexpected",
    "split_verdicts",
    "summary",
    "unexpected",
]

ALL_NON_NEGATIVE = 1 << 31  # float32 patterns +0 .. +NaN
# distribution name -> the module it imports as
IMPORT_NAMES = {"torchao": "torchao", "compressed-tensors": "compressed_tensors"}


@dataclass(frozen=True)
class LibraryRow:
    """One library quantizer: what to run, on which scheme, and the two rules to hold it to."""

    library: str
    scheme: str
    kernel: str
    own_rule: str
    spec_rule: str


_TA = "fp8lab.kernels.library.torchao_float8"
_CT = "fp8lab.kernels.library.compressed_tensors_fp8"
_MX = "fp8lab.kernels.library.torchao_mxfp8"
_R = LibraryRow
# fmt: off
ECOSYSTEM_ROWS: tuple[LibraryRow, ...] = (
    _R("torchao", "per-tensor", f"{_TA}:tensorwise", "torchao-0.18-float8-tensorwise", "vllm-per-tensor"),  # noqa: E501
    _R("torchao", "per-token", f"{_TA}:rowwise", "torchao-0.18-float8-rowwise", "vllm-native-per-token"),  # noqa: E501
    _R("compressed-tensors", "per-tensor", f"{_CT}:tensor", "compressed-tensors-0.20-tensor", "vllm-per-tensor"),  # noqa: E501
    _R("compressed-tensors", "per-token", f"{_CT}:token", "compressed-tensors-0.20-token", "vllm-per-token"),  # noqa: E501
    _R("compressed-tensors", "per-group", f"{_CT}:group_128", "compressed-tensors-0.20-group-128", "vllm-per-group"),  # noqa: E501
    _R("compressed-tensors", "per-token", f"{_CT}:channel", "compressed-tensors-0.20-channel", "vllm-native-per-token"),  # noqa: E501
    _R("torchao", "mxfp8", f"{_MX}:floor", "torchao-0.18-mxfp8-floor", "ocp-floor"),
    _R("torchao", "mxfp8", f"{_MX}:rceil", "torchao-0.18-mxfp8-rceil", "rceil"),
    _R("torchao", "nvfp4", "fp8lab.kernels.library.torchao_nvfp4:quantize", "torchao-0.18-nvfp4", "te-nvfp4-divide"),  # noqa: E501
)
# fmt: on

# (library rule, spec rule) -> (scale_differs, applied_differs, differ_nan_amax) over all 2**31
# non-negative amax patterns (nvfp4: ecosystem_nvfp4's), as a full sweep must find (docs/rules.md).
FULL_SPLITS: dict[tuple[str, str], tuple[int, int, int]] = {
    **nv.NVFP4_FULL_SPLITS,
    ("torchao-0.18-float8-tensorwise", "vllm-per-tensor"): (
        2_147_483_480,
        1_107_855_178,
        8_388_607,
    ),
    ("torchao-0.18-float8-rowwise", "vllm-native-per-token"): (
        2_147_483_511,
        1_297_694_881,
        8_388_607,
    ),
    ("compressed-tensors-0.20-tensor", "vllm-per-tensor"): (225, 2_147_483_402, 0),
    ("compressed-tensors-0.20-token", "vllm-per-token"): (998_244_351, 998_244_351, 8_388_607),
    ("compressed-tensors-0.20-group-128", "vllm-per-group"): (794_552_062, 794_552_062, 8_388_607),
    ("compressed-tensors-0.20-channel", "vllm-native-per-token"): (989_855_744, 2_147_483_511, 0),
    ("torchao-0.18-mxfp8-floor", "ocp-floor"): (1, 83_886_080, 0),
    ("torchao-0.18-mxfp8-rceil", "rceil"): (6_290, 73_406_612, 0),
}


def smoke_rows() -> tuple[LibraryRow, ...]:
    """A smoke run's rows: the first per-token one (GQ's per-token population is the smaller)."""
    return next(((r,) for r in ECOSYSTEM_ROWS if r.scheme == "per-token"), ECOSYSTEM_ROWS[:1])


def library_version(library: str) -> str | None:
    """The installed version of ``library`` (a distribution name), or None where it does not import.

    Looked up without importing it (the kernels import it in their own
    process); every library here needs torch too.
    """
    module = IMPORT_NAMES.get(library, library.replace("-", "_"))
    try:
        if any(importlib.util.find_spec(m) is None for m in ("torch", module)):
            return None
        return importlib.metadata.version(library)
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return None


def library_absent(library: str) -> str:
    """Why ``library`` (with torch) is absent here, ending with the install line."""
    module = IMPORT_NAMES.get(library, library.replace("-", "_"))
    why = absent("ecosystem", ("torch", module))
    return why or f"{library} is absent: {install_line('ecosystem')}"


def missing_rules(row: LibraryRow) -> tuple[str, ...]:
    """The rules ``row`` names that this build does not declare."""
    return tuple(n for n in (row.own_rule, row.spec_rule) if not nv.declared(n))


@dataclass(frozen=True)
class AmaxSplit:
    """Where two rules' scales differ over the amax patterns ``[start, stop)``.

    ``scale_differs``: the stored scales stand for different divisors (the same storage: bits
    differ; a multiplier ``m`` against a divisor ``d``: ``m * d != 1`` exactly).
    ``applied_differs``: the factor applied to ``x`` differs (``x / d``, ``x * fl(1/d)`` or
    ``x * m``; a division and a multiplication agree only by a power of two and its exact
    reciprocal), so some element of a block with that amax can get another code.
    ``*_nan_amax``: of those, the NaN patterns. NVFP4: block bytes and element multipliers.
    """

    own_rule: str
    spec_rule: str
    start: int
    stop: int
    examined: int
    scale_differs: int
    applied_differs: int
    differ_nan_amax: int
    first_differ: int  # lowest pattern whose scale differs, or -1
    engine: str  # what counted: "compiled" (the numba loop) or "numpy" (its twin)


def _applied(rule: str, scales: np.ndarray) -> tuple[str, np.ndarray]:
    """What ``rule`` does to ``x`` with stored ``scales``: ``("div", d)`` or ``("mul", m)``."""
    spec = get_rule(rule)
    if scales.dtype == np.uint8:  # e8m0: x times 2**(127 - byte), bytes 0 and 255 by the rule
        return "mul", _e8m0_factor(spec, scales)
    if spec.apply is Apply.DIVIDE:
        return "div", scales
    if spec.apply is Apply.RECIPROCAL:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return "mul", np.float32(1) / scales
    return "mul", scales


def _e8m0_factor(spec: ScaleRule, byte: np.ndarray) -> np.ndarray:
    """The float64 factor an e8m0 byte applies to a finite element under ``spec``.

    Bytes 1..254 give ``2**(127 - byte)``; byte 0 as ``e8m0_zero`` says (2^127,
    1 / 2^-126 or 1); byte 255 gives NaN, or 0 where ``e8m0_nan_block`` sends
    a NaN block's finite elements to zero.
    """
    factor = np.ldexp(1.0, 127 - byte.astype(np.int64))
    zero = {E8m0Zero.OCP: 2.0**127, E8m0Zero.MIN_NORMAL: 2.0**126, E8m0Zero.ONE: 1.0}
    factor[byte == 0] = zero[spec.e8m0_zero]
    nan_block = 0.0 if spec.e8m0_nan_block is E8m0NanBlock.FINITE_TO_ZERO else np.nan
    factor[byte == 255] = nan_block
    return factor


def _stored(rule: str, scales: np.ndarray) -> tuple[bool, np.ndarray]:
    """``(is a multiplier, scales)``: what :func:`_differs` compares."""
    return get_rule(rule).storage is Storage.MULTIPLIER, scales


def _differs(a: tuple[bool, np.ndarray], b: tuple[bool, np.ndarray]) -> np.ndarray:
    """Elementwise: do the two scales stand for different divisors (or e8m0 bytes)?"""
    (a_mul, sa), (b_mul, sb) = a, b
    if sa.dtype != sb.dtype:
        return np.ones(sa.shape, np.bool_)
    if sa.dtype == np.uint8 or a_mul == b_mul:
        word = np.dtype(f"u{sa.dtype.itemsize}")  # the stored bits, one word per scale
        return np.asarray(sa.view(word) != sb.view(word))
    with np.errstate(over="ignore", invalid="ignore"):
        product = sa.astype(np.float64) * sb.astype(np.float64)  # exact: 24 + 24 bits
    return np.asarray(product != 1.0)


def _applied_differs(a: tuple[str, np.ndarray], b: tuple[str, np.ndarray]) -> np.ndarray:
    """Elementwise: do the two factors of :func:`_applied` scale some ``x`` differently?"""
    (op_a, va), (op_b, vb) = a, b
    if va.dtype == np.float64 or vb.dtype == np.float64:  # e8m0 factors: the same NaN bits
        return _differs((False, va), (False, vb))
    if op_a == op_b:
        return _differs((False, va), (False, vb))
    d, m = (va, vb) if op_a == "div" else (vb, va)
    bits = d.view(np.uint32)
    normal_pow2 = ((bits & 0x7F_FFFF) == 0) & (((bits >> 23) & 0xFF) - 1 < 254)
    with np.errstate(over="ignore", invalid="ignore"):
        exact = d.astype(np.float64) * m.astype(np.float64) == 1.0
    return np.asarray(~(normal_pow2 & exact))


SPLIT_ENGINES = ("auto", "compiled", "numpy")

_STEP = 1 << 18  # amax patterns per step: fewer numpy calls per chunk, arrays of a few MiB

Counts = tuple[int, int, int, int]


def _stepped(
    step: Callable[[str, str, int, int], Counts], own: str, spec: str, lo: int, hi: int
) -> Counts:
    """``step`` over ``[lo, hi)`` in :data:`_STEP`-pattern pieces, summed (first: the lowest).

    Every count is per pattern, so the pieces add up to the whole chunk's; numpy
    runs each scale step over arrays of a few MiB, not a whole chunk's (a 2**31
    NVFP4 split: about 20 CPU-s in pieces of 2**16 patterns, 16-17 in pieces of 2**18).
    """
    total, first = [0, 0, 0], -1
    for a in range(lo, hi, _STEP):
        *counts, found = step(own, spec, a, min(a + _STEP, hi))
        total = [t + c for t, c in zip(total, counts, strict=True)]
        first = found if first < 0 else first
    return total[0], total[1], total[2], first


def _split_chunk(own_rule: str, spec_rule: str, lo: int, hi: int, engine: str = "auto") -> Counts:
    """One chunk's counts: the compiled loop, or :func:`_split_step` in cache-sized steps."""
    keep_heap()  # each step's arrays reuse the last one's pages (fp8lab.runtime.heap)
    if _compiled(engine):
        return split_counts_compiled(get_rule(own_rule), get_rule(spec_rule), lo, hi)
    return _stepped(_split_step, own_rule, spec_rule, lo, hi)


def _compiled(engine: str) -> bool:
    """Whether ``engine`` runs a pair in the compiled loop ("auto": where numba is).

    Raises:
        ValueError: for an unknown engine, or "compiled" without numba.
    """
    if engine not in SPLIT_ENGINES:
        raise ValueError(f"unknown amax split engine {engine!r}; known: {', '.join(SPLIT_ENGINES)}")
    if engine == "compiled" and not COMPILED:  # pragma: no cover - numba is a pinned dependency
        raise ValueError("the compiled amax split needs numba")
    return engine != "numpy" and COMPILED


def _nvfp4_split_chunk(own_rule: str, spec_rule: str, lo: int, hi: int) -> Counts:
    """NVFP4's split step over one chunk, in cache-sized steps."""
    keep_heap()  # each step's arrays reuse the last one's pages (fp8lab.runtime.heap)
    return _stepped(nv.nvfp4_split_chunk, own_rule, spec_rule, lo, hi)


def split_verdicts(
    own_rule: str, spec_rule: str, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per amax pattern of ``[lo, hi)``, by numpy: ``(stored scales differ, applied differ)``.

    The numpy twin of :func:`fp8lab.studies.amax_split_compiled.split_verdicts_compiled`.
    """
    return _verdicts_of(own_rule, spec_rule, np.arange(lo, hi, dtype=np.uint32).view(np.float32))


def _verdicts_of(own_rule: str, spec_rule: str, amax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    own, spec = amax_scales(amax, own_rule), amax_scales(amax, spec_rule)
    split = _differs(_stored(own_rule, own), _stored(spec_rule, spec))
    moved = _applied_differs(_applied(own_rule, own), _applied(spec_rule, spec))
    return split, moved


def _split_step(own_rule: str, spec_rule: str, lo: int, hi: int) -> Counts:
    """One step's counts: ``(scale_differs, applied_differs, differ_nan_amax, first_differ)``."""
    amax = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
    split, moved = _verdicts_of(own_rule, spec_rule, amax)
    nan = np.isnan(amax)
    first = lo + int(np.argmax(split)) if split.any() else -1
    return int(split.sum()), int(moved.sum()), int((split & nan).sum()), first


def amax_split(
    own_rule: str, spec_rule: str, run: RangeRun | None = None, engine: str = "auto"
) -> AmaxSplit:
    """Count the float32 amax patterns of ``run``'s range (all 2**31 by default) where scales split.

    Each pattern is one block's amax (+0 up to +NaN), put through each rule's
    scale step (:func:`fp8lab.kernels.scheme.amax_scales`, float32 input), in
    ``run``'s chunks on its workers (default: one process per core). NVFP4: block
    amaxes at one global amax (:mod:`fp8lab.studies.ecosystem_nvfp4`).
    ``engine``: "compiled" runs both scale steps in one numba loop
    (:mod:`fp8lab.studies.amax_split_compiled`), "numpy" on arrays (its twin,
    the same counts), "auto" the loop where it applies; NVFP4 pairs run on numpy.

    Raises:
        ValueError: for an unknown or mixed (NVFP4 and not) pair, a range outside
            ``[0, 2**31]``, an unknown engine, or "compiled" for an NVFP4 pair.
    """
    run = run or RangeRun()
    start, stop = run.bounds(ALL_NON_NEGATIVE, "amax pattern range")
    # a named scale rule or one derived from it (BASE[AXIS=VALUE]); nvfp4_pair refuses the rest
    nvfp4 = any(n not in RULES and "[" not in n for n in (own_rule, spec_rule))
    _ = nv.nvfp4_pair(own_rule, spec_rule) if nvfp4 else (get_rule(own_rule), get_rule(spec_rule))
    if nvfp4 and engine == "compiled":
        raise ValueError(f"the compiled amax split does not run {own_rule} against {spec_rule}")
    # an unknown engine is refused here, not in a worker
    ran = "compiled" if _compiled(engine) and not nvfp4 else "numpy"
    chunks = run.chunks([(start, stop)])
    place = run.placement()
    parts = run_tasks(
        _nvfp4_split_chunk if nvfp4 else _split_chunk,
        [(own_rule, spec_rule, lo, hi, *(() if nvfp4 else (ran,))) for lo, hi in chunks],
        workers=place.workers if len(chunks) > 1 else 1,  # one chunk: here
        executor=place.executor if len(chunks) > 1 else None,
        report=run.reporter("amax split", len(chunks)),
    )
    firsts = [p[3] for p in parts if p[3] >= 0]
    return AmaxSplit(
        own_rule,
        spec_rule,
        start,
        stop,
        stop - start,
        sum(p[0] for p in parts),
        sum(p[1] for p in parts),
        sum(p[2] for p in parts),
        min(firsts) if firsts else -1,
        ran,
    )


def _gq_on(calls: list[GqCall], outputs: list[Any], scheme: str, rule: str) -> GateResult:
    """GQ under ``rule`` on the recorded outputs (the exact reference decides)."""
    answers = iter(outputs)

    def replay(*_args: Any) -> Any:
        return next(answers)

    return run_gq(replay, scheme=scheme, rule=rule, kernel_name="recorded", calls=calls)


Runner = Callable[[LibraryRow, list[GqCall]], list[Any]]


def run_isolated(row: LibraryRow, calls: list[GqCall], timeout: float = 300.0) -> list[Any]:
    """The kernel's outputs for ``calls``, run in a child process with torch tensors on the CPU."""
    host = KernelHost("scheme", row.kernel, scheme=row.scheme, timeout=timeout, arrays="torch")
    with host:
        return record_outputs(host.kernel(), calls, row.scheme)


# fmt: off
_MEASURED = (  # the columns a row measures, None until measured
    "inferred", "inferred_rule", "own_status", "own_calls", "own_words", "own_failed",
    "own_mismatches", "spec_status", "spec_failed", "spec_mismatches", "differing_axes",
    "amax_examined", "amax_scale_differs", "amax_applied_differs", "amax_nan_differs",
    "amax_first_differ", "amax_global",  # amax_global: an nvfp4 row's global amax
    "amax_engine",  # what counted the split: "compiled" or "numpy"
)
# fmt: on


def ecosystem_row(
    row: LibraryRow,
    run: RangeRun | None = None,
    *,
    seed: int = 0,
    runner: Runner = run_isolated,
) -> dict[str, Any]:
    """One table row for ``row``: versions, inferred rule, GQ under both rules, the amax split.

    ``status`` is ``checked``, ``absent`` (the library does not import),
    ``rule not in this build`` or ``kernel fault``; the columns a status
    leaves unmeasured are None.
    """
    version = library_version(row.library)
    out: dict[str, Any] = {
        "library": row.library,
        "version": version or "absent",
        "scheme": row.scheme,
        "kernel": row.kernel,
        "own_rule": row.own_rule,
        "spec_rule": row.spec_rule,
        "status": "checked",
        "reason": "",
        **dict.fromkeys(_MEASURED),
    }
    missing = missing_rules(row)
    if missing:
        return {**out, "status": "rule not in this build", "reason": ", ".join(missing)}
    own, spec = nv.any_rule(row.own_rule), nv.any_rule(row.spec_rule)
    axes = differing_axes(own, spec)
    split = amax_split(row.own_rule, row.spec_rule, run)
    out |= {
        "differing_axes": ", ".join(f"{k}: {_text(own, k)} -> {_text(spec, k)}" for k in axes),
        "amax_examined": split.examined,
        "amax_global": nv.NVFP4_GLOBAL_AMAX if row.scheme == "nvfp4" else None,
        "amax_scale_differs": split.scale_differs,
        "amax_applied_differs": split.applied_differs,
        "amax_nan_differs": split.differ_nan_amax,
        "amax_first_differ": f"{split.first_differ:#010x}" if split.first_differ >= 0 else "-",
        "amax_engine": split.engine,
    }
    if version is None:
        return {**out, "status": "absent", "reason": library_absent(row.library)}
    calls = gq_calls(row.scheme, GQ_RULES[row.scheme][0], seed=seed)
    try:
        outputs = runner(row, calls)
        found = infer_rule(row.scheme, row.kernel, calls, outputs)
    except (KernelFaultError, KernelLoadError) as exc:
        return {**out, "status": "kernel fault", "reason": str(getattr(exc, "reason", exc))}
    same = found.chosen is not None and not differing_axes(found.chosen, own)
    # the inference's own GQ check already ran the library's declaration, field for field
    mine = found.check if same and found.check else _gq_on(calls, outputs, row.scheme, own.name)
    theirs = _gq_on(calls, outputs, row.scheme, row.spec_rule)
    changed = f" with {', '.join(found.differing)} changed" if found.differing else ""
    return out | {
        "inferred": found.status,
        "inferred_rule": f"{found.nearest_named}{changed}",
        "own_status": mine.status.value,
        "own_calls": mine.assertions,
        "own_words": mine.words,
        "own_failed": mine.assertions_failed,
        "own_mismatches": mine.mismatches + mine.nan_code_mismatches,
        "spec_status": theirs.status.value,
        "spec_failed": theirs.assertions_failed,
        "spec_mismatches": theirs.mismatches + theirs.nan_code_mismatches,
    }


def ecosystem_table(
    rows: tuple[LibraryRow, ...], run: RangeRun | None = None, *, seed: int = 0
) -> list[dict[str, Any]]:
    """:func:`ecosystem_row` for each of ``rows``, every amax split on one pool of workers."""
    with sharing_workers(run or RangeRun()) as shared:  # amax_split's default: all 2**31
        return [ecosystem_row(row, shared, seed=seed) for row in rows]


def split_unexpected(row: dict[str, Any]) -> list[str]:
    """Where a row's full 2**31 amax split is not :data:`FULL_SPLITS`' count (empty: as published).

    A row with no published count, or one not swept over all 2**31, has nothing to compare.
    """
    want = FULL_SPLITS.get((row["own_rule"], row["spec_rule"]))
    if want is None or row["amax_examined"] != ALL_NON_NEGATIVE:
        return []
    got = (row["amax_scale_differs"], row["amax_applied_differs"], row["amax_nan_differs"])
    return [] if got == want else [f"amax split {got}, published {want}"]


def unexpected(row: dict[str, Any]) -> list[str]:
    """What in an :func:`ecosystem_row` row is not as expected (empty: as expected).

    A checked row: the inferred rule is the library's own, GQ passes it under
    that rule and fails it under the spec rule, and the two rules differ on
    some axis; a full 2**31 amax split finds :data:`FULL_SPLITS`' counts. A row
    ``absent`` (its split still counted) or ``rule not in this build`` is as
    expected; a ``kernel fault`` is not.
    """
    if row["status"] == "rule not in this build":
        return []
    if row["status"] == "absent":
        return split_unexpected(row)
    if row["status"] != "checked":
        return [f"{row['status']}: {row['reason']}"]
    wrong = split_unexpected(row)
    if row["inferred"] != "reproduced" or row["inferred_rule"] != row["own_rule"]:
        wrong.append(f"inferred {row['inferred_rule']} ({row['inferred']}), not {row['own_rule']}")
    if row["own_status"] != "PASS":
        wrong.append(f"GQ under {row['own_rule']}: {row['own_status']}")
    if row["spec_status"] != "FAIL":
        wrong.append(f"GQ under {row['spec_rule']}: {row['spec_status']}, expected FAIL")
    if not row["differing_axes"]:
        wrong.append(f"{row['own_rule']} and {row['spec_rule']} differ on no axis")
    return wrong


def axis_rows(table: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per axis on which a row's two rules differ: axis, library's value, spec's.

    Read from the rule records (rows whose rules this build lacks give none).
    """
    out = []
    for r in table:
        if missing_rules(LibraryRow(r["library"], r["scheme"], "", r["own_rule"], r["spec_rule"])):
            continue
        own, spec = nv.any_rule(r["own_rule"]), nv.any_rule(r["spec_rule"])
        out += [
            {
                "own_rule": own.name,
                "spec_rule": spec.name,
                "axis": k,
                "own": _text(own, k),
                "spec": _text(spec, k),
            }
            for k in differing_axes(own, spec)
        ]
    return out


def summary(table: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, int]]:
    """The report summary of :func:`ecosystem_row` rows: verdicts, then key numbers.

    A checked row's verdict is GQ's under the library's rule, with the spec
    rule's (an expected FAIL) beside it; an absent library or a missing rule
    is PENDING, saying which.
    """
    verdicts = {}
    for r in table:
        name = f"{r['library']} {r['scheme']} under {r['own_rule']}"
        if r["status"] == "checked":
            verdicts[name] = (
                f"{r['own_status']} (under {r['spec_rule']}: {r['spec_status']}, expected FAIL)"
            )
        elif r["status"] == "kernel fault":
            verdicts[name] = f"FAIL (kernel fault: {r['reason']})"
        else:
            verdicts[name] = f"PENDING ({r['status']}: {r['reason']})"
    checked = [r for r in table if r["status"] == "checked"]
    numbers = {
        "rows": len(table),
        "rows checked": len(checked),
        "rows absent": sum(r["status"] == "absent" for r in table),
        "rows whose rule is not in this build": sum(
            r["status"] == "rule not in this build" for r in table
        ),
        "GQ calls examined (all rows, own rule)": sum(r["own_calls"] for r in checked),
        "words mismatching their own rule": sum(r["own_mismatches"] for r in checked),
        "amax patterns swept per row": max((r["amax_examined"] or 0 for r in table), default=0),
    }
    return verdicts, numbers


def _text(rule: object, key: str) -> str:
    value = getattr(rule, key)
    return str(getattr(value, "value", value))
