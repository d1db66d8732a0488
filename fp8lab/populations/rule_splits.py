"""Populations derived from a rule: where the rule and each of its one-axis variants split.

For a scale rule ``R``, each axis ``A`` and each value ``v != R.A`` for which
``R[A=v]`` is a rule (:func:`axis_values`), the search puts one probe row per
amax through the port of both rules (:func:`probe_rows`: the amax in every
16 elements, with 15 elements on and beside the element format's midpoints
below it) and keeps the amaxes whose codes or scales differ. The amax domain
is every non-negative bfloat16 pattern (2^15, exhaustive) for bfloat16 input,
and for float32 input those patterns and the two float32 patterns either side
of each (about 2^17, where the designed ``log2-split`` amaxes sit). GQ's own
seeded population (seed 0) is put through both ports as well.

Each ``(A, v)`` ends as an :class:`AxisSplit`: ``split`` (GQ's population
and the chosen amaxes, at most three per input dtype, make at least three
calls on which the two ports differ), ``moot`` (the variant computes the same
words: ``nan_code`` is what GQ accepts, not what a kernel computes),
``layout`` (the variant's scales have another shape, so every call fails),
or ``undecidable`` (no split found on the swept amaxes, with the reason: the
float32 amaxes between the probes are not swept). Where the sweep finds no
split and an argument shows the two rules compute the same words for every
input (:func:`_same_words`: two clamps a saturating cast cannot tell apart,
a power-of-two scale whose reciprocal is exact, an RCEIL quotient that never
overflows, arithmetic in bfloat16 on an exact power-of-two step), the row is
``moot`` with the argument; the argument is only consulted after the sweep,
so a wrong one can never hide a split. ``scripts/rule-splits``,
which writes the named rules' tables, turns an undecidable row of an axis
that acts on the scale alone into ``equal`` when a sweep of all 2^31 float32
amaxes finds no scale that differs. Values: every value of an
enum axis; for a number, ``None`` and every value the named rules give the
same field; a flag both; ``element`` e4m3fn and e5m2; ``amax_lanes`` 8.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.kernels.scheme import scheme_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.populations.split_record import AxisSplit
from fp8lab.specs.formats import get_format
from fp8lab.specs.rule_file import derived_name, field_kinds
from fp8lab.specs.scale_rules import RULES, Apply, Clamp, Granularity, Pow2, ScaleRule

__all__ = [
    "SPLIT_DTYPES",
    "AxisSplit",
    "axis_values",
    "probe_rows",
    "split_cases",
    "split_table",
    "variant",
]

SPLIT_DTYPES = ("float32", "bfloat16")
_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
_ELEMENTS = ("e4m3fn", "e5m2")
_DESIGNED: dict[str, tuple[object, ...]] = {"amax_lanes": (8,)}  # a lane width no rule names
_LAYOUT = ("granularity", "block")
_PICK = 3  # amaxes kept per input dtype
_CHUNK = 1 << 13  # probe rows per port call
_NEAR = (-2, -1, 1, 2)  # float32 patterns beside each bfloat16 one


def _values(axis: str) -> list[object]:
    kind = field_kinds(ScaleRule)[axis]
    if issubclass(kind.base, enum.Enum):
        return list(kind.base)
    if axis == "element":
        return list(_ELEMENTS)
    if kind.base is bool:
        return [True, False]
    if kind.base is str:  # scale_format: tied to pow2, no value of its own
        return []
    used = {getattr(r, axis) for r in RULES.values()} | set(_DESIGNED.get(axis, ()))
    if kind.optional:
        used.add(None)
    return sorted(used, key=lambda v: (v is not None, v or 0))


def axis_values(rule: ScaleRule) -> list[tuple[str, object]]:
    """Every ``(axis, value)``, ``value != rule.axis``, for which ``rule[axis=value]`` is a rule."""
    found = []
    for axis in field_kinds(ScaleRule):
        if axis in ("name", "source"):
            continue
        for value in _values(axis):
            if value != getattr(rule, axis) and variant(rule, axis, value) is not None:
                found.append((axis, value))
    return found


def variant(rule: ScaleRule, axis: str, value: object) -> ScaleRule | None:
    """``rule[axis=value]``, named so, or None where that is no rule."""
    try:
        changes: dict[str, Any] = {axis: value}
        return dataclasses.replace(rule, name=derived_name(rule.name, changes), **changes)
    except ValueError:
        return None


def probe_rows(amax_bits: npt.NDArray[np.uint32], element: str, k: int) -> npt.NDArray[np.float32]:
    """One float32 row of ``k`` elements per amax pattern: the amax in every 16 elements.

    The other 15 of each 16 are five midpoints between ``element``'s
    magnitudes (spread over its range), scaled by ``amax / max``, and the
    float32 neighbours of each, signs alternating: where rounding, the scale's
    last bit and the quotient's form decide the code. A signalling NaN pattern
    is quieted (its quiet bit set): C's ``fmaxf`` takes a signalling NaN for a
    NaN where CUDA's and numpy's take it for missing, and no rule says which.
    """
    fmt = get_format(element)
    mags = [float(fmt.magnitude_value(i)) for i in range(fmt.max_code + 1)]
    mids = np.array([(lo + hi) / 2 for lo, hi in itertools.pairwise(mags)]) / float(fmt.max)
    fracs = mids[np.linspace(len(mids) // 4, len(mids) - 1, 5).round().astype(np.intp)]
    bits = np.asarray(amax_bits, np.uint32)
    signalling = ((bits & 0x7FC0_0000) == 0x7F80_0000) & ((bits & 0x003F_FFFF) != 0)
    amax = np.where(signalling, bits | np.uint32(0x0040_0000), bits).view(np.float32)
    with np.errstate(all="ignore"):
        x0 = (amax[:, None].astype(np.float64) * fracs).astype(np.float32)
        trio = np.concatenate(
            [x0, np.nextafter(x0, np.float32(0)), np.nextafter(x0, amax[:, None])], 1
        )
    trio *= np.where(np.arange(15) % 2, np.float32(-1), np.float32(1))
    pattern = np.concatenate([amax[:, None], trio], axis=1).astype(np.float32)
    return np.tile(pattern, (1, k // 16))


def _domain(dtype: str) -> npt.NDArray[np.uint32]:
    """The amax patterns swept for ``dtype`` (float32 bits), ascending."""
    bf16 = np.arange(1 << 15, dtype=np.uint32) << np.uint32(16)
    if dtype == "bfloat16":
        return bf16
    near = [bf16.astype(np.int64) + d for d in _NEAR]
    every = np.concatenate([bf16.astype(np.int64), *near])
    return np.unique(every[(every >= 0) & (every < 1 << 31)]).astype(np.uint32)


def _per_row(rule: ScaleRule) -> ScaleRule:
    """``rule`` on probe rows of 16: each row a tensor (per-tensor) or a block (blocked).

    A probe row repeats one 16-element pattern that holds its amax, so each of
    the rule's own blocks (or its row, or its tensor) holds the same amax and
    the same elements: a row of 16 gives the same scale and codes, for less.
    """
    if rule.granularity is Granularity.TENSOR:
        return dataclasses.replace(rule, granularity=Granularity.ROW)
    if rule.granularity is Granularity.BLOCK:
        return dataclasses.replace(rule, block=16)
    return rule


def _words(x: np.ndarray, rule: ScaleRule) -> tuple[np.ndarray, np.ndarray]:
    codes, scales = scheme_quant(x, rule)
    return codes.reshape(len(x), -1), scales.reshape(len(x), -1).view(np.uint8)


@dataclass
class _Probes:
    """One input dtype's probe rows and base calls, with the rule's own words on each."""

    domain: npt.NDArray[np.uint32]
    rows: list[np.ndarray]
    words: list[tuple[np.ndarray, np.ndarray]]
    base: list[np.ndarray]
    base_words: list[tuple[np.ndarray, np.ndarray]]


def _probes(rule: ScaleRule, dtype: str, seed: int) -> _Probes:
    domain = _domain(dtype)
    rows = [
        probe_rows(domain[lo : lo + _CHUNK], rule.element, 16).astype(_DTYPES[dtype])
        for lo in range(0, domain.size, _CHUNK)
    ]
    base = []
    for _, words in scheme_population(rule.element, seed):
        parts = list(words) if rule.granularity is Granularity.TENSOR else [words]
        base += [(p.reshape(1, -1) if p.ndim == 1 else p).astype(_DTYPES[dtype]) for p in parts]
    own = _per_row(rule)
    return _Probes(
        domain, rows, [_words(x, own) for x in rows], base, [_words(x, rule) for x in base]
    )


def _split_amaxes(probes: _Probes, other: ScaleRule) -> npt.NDArray[np.uint32]:
    """The swept amax patterns on whose probe rows the rule and ``other`` differ."""
    found = []
    mine = _per_row(other)
    for i, (x, (c1, s1)) in enumerate(zip(probes.rows, probes.words, strict=True)):
        c2, s2 = _words(x, mine)
        differ = (c1 != c2).any(axis=1) | (s1 != s2).any(axis=1)
        found.append(probes.domain[i * _CHUNK : i * _CHUNK + len(x)][differ])
    return np.concatenate(found)


def _base_calls(probes: _Probes, other: ScaleRule) -> int:
    """Calls of GQ's seeded population on which the rule and ``other`` differ."""
    return sum(
        any(not np.array_equal(a, b) for a, b in zip(want, _words(x, other), strict=True))
        for x, want in zip(probes.base, probes.base_words, strict=True)
    )


def split_cases(
    table: tuple[AxisSplit, ...], element: str, dtype: str, k: int = 256
) -> list[npt.NDArray[np.float32]]:
    """GQ's ``rule-split`` cases for ``dtype``: call ``j`` holds the ``j``-th amax of every split.

    One probe row (:func:`probe_rows`, ``k`` elements) per distinct amax; so
    every ``(axis, value)`` with ``n`` amaxes for ``dtype`` is in ``n`` calls.
    """
    field = "bfloat16_amaxes" if dtype == "bfloat16" else "float32_amaxes"
    out = []
    for j in range(_PICK):
        bits = sorted({getattr(s, field)[j] for s in table if len(getattr(s, field)) > j})
        if bits:
            out.append(probe_rows(np.array(bits, np.uint32), element, k))
    return out


def _moot(rule: ScaleRule, axis: str) -> str:
    """Why ``rule`` and every variant on ``axis`` compute the same words, or ''."""
    if axis == "nan_code":
        return "which NaN codes GQ accepts, not which the port computes"
    if axis == "saturate" and rule.clamp.value != "none":
        return "the clamp to +-max before the cast leaves it nothing to overflow"
    if axis == "scale_source":
        return "who forms the scale (a static rule's is handed to the kernel: G1's), not GQ's words"
    if axis == "apply" and rule.scale_format == "e8m0fnu":
        return (
            "an e8m0 scale is a power of two: the element step multiplies by 2**(127 - byte) "
            "whatever apply says (x / 2**e and x * 2**-e are one float32)"
        )
    if axis == "scale_from" and rule.pow2.value == "ocp-floor":
        return "the OCP FLOOR byte is read from the amax's exponent bits: no quotient is formed"
    return ""


_POWER_OF_TWO = (Pow2.CEIL_BITS, Pow2.OCP_FLOOR, Pow2.RCEIL)


def _same_words(rule: ScaleRule, axis: str, value: object) -> str:
    """Why ``rule`` and ``rule[axis=value]`` give the same words on every input, or ''.

    Consulted only where the sweep found no split: each argument is for the
    whole domain, the sweep its check on the amaxes it covers.
    """
    if axis == "clamp" and rule.saturate and {rule.clamp, value} <= {Clamp.NONE, Clamp.TORCH}:
        return (
            "clamp none and torch both leave a NaN quotient NaN, and the saturating cast sends "
            "every |q| > max (inf too) to +-max as torch's clamp does: the same code for every q"
        )
    if (
        axis == "apply"
        and rule.pow2 is Pow2.CEIL_BITS
        and {rule.apply, value} == {Apply.DIVIDE, Apply.RECIPROCAL}
    ):
        return (
            "a ceil-bits scale is a power of two (2**-33 up to 2**127, or inf), whose float32 "
            "reciprocal is exact: x / s and x * fl(1/s) are one correctly rounded float32"
        )
    if (
        axis == "saturate"
        and rule.pow2 is Pow2.RCEIL
        and rule.clamp is Clamp.NONE
        and rule.scale_ub is None
        and rule.amax_lanes is None
    ):
        return (
            "an RCEIL scale is the amax's quotient by max rounded up to a power of two, so every "
            "|x| / scale is at most max within float32 rounding, below the midpoint above max "
            "where saturation starts: no element reaches the overflow saturate decides"
        )
    if axis == "arithmetic" and rule.pow2 in _POWER_OF_TWO:
        return (
            "the axis changes bfloat16 input only: every bfloat16 amax pattern went through both "
            "scale steps (the sweep), and the element step divides a bfloat16 by a power of two, "
            "exact in bfloat16 as in float32 (a quotient below float32's normal range encodes "
            "to a signed zero either way)"
        )
    return ""


def _pick(bits: np.ndarray) -> tuple[int, ...]:
    """At most three of ``bits`` (ascending), spread: the first, the middle and the last."""
    if bits.size <= _PICK:
        return tuple(int(b) for b in bits)
    return tuple(int(bits[i]) for i in (0, bits.size // 2, bits.size - 1))


def split_table(rule: ScaleRule, seed: int = 0) -> tuple[AxisSplit, ...]:
    """The :class:`AxisSplit` of ``rule`` and each of its one-axis variants, in field order.

    Raises:
        ValueError: for a rule the port cannot run (a K its block does not divide).
    """
    out = []
    with np.errstate(all="ignore"):
        probes = [_probes(rule, d, seed) for d in SPLIT_DTYPES]
        for axis, value in axis_values(rule):
            other = variant(rule, axis, value)
            assert other is not None
            out.append(_axis_split(rule, other, axis, value, probes))
    return tuple(out)


def _axis_split(
    rule: ScaleRule, other: ScaleRule, axis: str, value: object, probes: list[_Probes]
) -> AxisSplit:
    text = derived_name("", {axis: value})[1:-1].partition("=")[2]
    if axis in _LAYOUT:
        return AxisSplit(axis, text, "layout", 0, (), (), (0, 0), "the scales' shape differs")
    moot = _moot(rule, axis)
    if moot:
        return AxisSplit(axis, text, "moot", 0, (), (), (0, 0), moot)
    base = sum(_base_calls(p, other) for p in probes)
    f32, bf16 = (_split_amaxes(p, other) for p in probes)
    n32, n16 = (int(p.domain.size) for p in probes)
    picked = _pick(f32), _pick(bf16)
    calls = base + len(picked[0]) + len(picked[1])
    if calls >= _PICK:
        return AxisSplit(axis, text, "split", base, *picked, (n32, n16), "")
    same = _same_words(rule, axis, value) if calls == 0 else ""
    if same:
        reason = f"{same}; the sweep found no split either"
        return AxisSplit(axis, text, "moot", 0, (), (), (n32, n16), reason)
    reason = (
        f"no split on GQ's population, on the {n16} bfloat16 amaxes (every one) or the {n32} "
        "float32 amaxes at and beside them; the float32 amaxes between are not swept"
    )
    if calls:
        reason = f"only {calls} splitting calls: " + reason.replace("no split", "no more")
    return AxisSplit(axis, text, "undecidable", base, *picked, (n32, n16), reason)
