"""Every axis of both rule kinds is read by the reference, the port, the candidates and the mutants.

An axis is a field of :class:`ScaleRule` or :class:`Nvfp4ScaleRule` (name and
sources aside). For each, a flip ``R[A:=v]`` of a named rule is searched for
on GQ's population rows: the port must give another output on some row
(else the port ignores the axis), and the exact reference must give another
output on that same row (else the reference ignores it). The candidates of
``rules infer`` must vary the axis over its every value, or hold it fixed
with a stated reason; the mutant catalogue must break it in some mutant, or
say why none does. Each failure names the axis and the place that ignores it.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates.gq_plan import _plan
from fp8lab.gates.nvfp4_candidates import NVFP4_AXES, NVFP4_HELD_FIXED
from fp8lab.gates.rule_candidates import ENUM_AXES, HELD_FIXED
from fp8lab.kernels.scheme import nvfp4_quant, scheme_quant
from fp8lab.mutants.scheme_mutants import MUTANT_AXES, SCHEME_MUTANTS, WITHOUT_MUTANT
from fp8lab.populations.schemes import scheme_population
from fp8lab.refs import reference_nvfp4_quant, reference_scheme_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.rule_file import field_kinds
from fp8lab.specs.scale_rules import RULES, Apply, NanCode, ScaleRule

UNNAMED = ("name", "source", "element_source")
KINDS: dict[str, tuple[type, dict[str, Any]]] = {
    "scale": (ScaleRule, dict(RULES)),
    "nvfp4": (Nvfp4ScaleRule, {n: r for n, r in NVFP4_RULES.items() if r.element_source}),
}
AXES = [
    (kind, f.name)
    for kind, (cls, _) in KINDS.items()
    for f in dataclasses.fields(cls)
    if f.name not in UNNAMED
]
IDS = [f"{k}-{a}" for k, a in AXES]
# axes the port and the reference do not read, and why (each checked below)
NOT_READ = {
    ("scale", "scale_format"): "tied to pow2: a rule refuses any other value",
    ("scale", "nan_code"): "a comparison policy: GQ's plan reads it, not the output",
    ("scale", "scale_source"): "who forms the scale: G1 hands it (given), GQ's kernel computes "
    "it; the static port and reference read given scales (tests/gates/test_g1_rules.py)",
}
# axes that show only on a named rule with another field changed first, and that change
BASES = {
    # float64 and float32 round one division alike (fp8lab.sweeps.quotient): the axis shows
    # only where the scale formula takes a reciprocal first
    ("scale", "quotient"): {"scale_from": Apply.RECIPROCAL},
}


def _alternatives(cls: type, rules: dict[str, Any], axis: str) -> list[object]:
    """The values tried for ``axis``: every value of its type the rules suggest."""
    kind = field_kinds(cls)[axis]
    used = {getattr(r, axis) for r in rules.values()}
    if kind.optional:
        used.add(None)
    if issubclass(kind.base, enum.Enum):
        return list(kind.base)
    if kind.base is bool:
        return [True, False]
    if kind.base is str:
        return sorted(used | {"e5m2"}, key=str)
    if kind.base is int:
        return sorted(used | {16, 32, 128}, key=lambda v: (v is None, v or 0))
    if kind.arity:
        return [*used, (2.0**-9, 448.0)]
    numbers = {
        getattr(r, k)
        for r in rules.values()
        for k, other in field_kinds(cls).items()
        if other.base is float and not other.arity
    }
    return [None, *sorted(v for v in numbers | {1.0} if v is not None)]


@cache
def _rows(element: str) -> list[np.ndarray]:
    """GQ's population for ``element``, two rows at a time, float32 then bfloat16 (not NVFP4)."""
    # two rows at a time: a tensor and its rows then differ
    rows = [x[i : i + 2] for _, x in scheme_population(element, 0) for i in range(0, len(x), 2)]
    if element == "e2m1fn":
        return rows
    return rows + [r.astype(ml_dtypes.bfloat16) for r in rows]


def _run(kind: str, quant: Any, x: np.ndarray, rule: Any) -> tuple[bytes, bytes]:
    if kind == "nvfp4":
        x = x[:1]  # one tensor: its global amax
        g = np.fmax.reduce(np.abs(x.astype(np.float32)).reshape(-1), initial=np.float32(0))
        codes, scales = quant(x, np.array([g], np.float32), rule)
    else:
        codes, scales = quant(x, rule)
    return np.asarray(codes).tobytes(), np.asarray(scales).tobytes()


def _ref(x: np.ndarray, g: np.ndarray, rule: Nvfp4ScaleRule) -> Any:
    return reference_nvfp4_quant(x.astype(np.float32), float(g[0]), rule)


def _flipped(rule: Any, axis: str, value: object, checked: bool = True) -> Any:
    """``rule`` with ``axis = value``: a rule, or (``checked`` False) the field set anyway.

    Unchecked, the port and the reference compute a rule no file can state
    (``storage`` without its ``apply``): enough to see whether they read the field.
    """
    try:
        return dataclasses.replace(rule, name="flipped", **{axis: value})
    except ValueError:
        if checked:
            return None
        unchecked = object.__new__(type(rule))
        for f in dataclasses.fields(rule):
            object.__setattr__(unchecked, f.name, getattr(rule, f.name))
        object.__setattr__(unchecked, axis, value)
        return unchecked


def _bases(kind: str, axis: str) -> dict[str, Any]:
    rules = KINDS[kind][1]
    change = BASES.get((kind, axis))
    if change is None:
        return rules
    return {n: dataclasses.replace(r, **change) for n, r in rules.items() if r.pow2.value == "none"}


def _flip(kind: str, axis: str) -> tuple[Any, object, np.ndarray, bool] | None:
    """A base rule, a value of ``axis``, a row on which the port's outputs differ, and
    whether the flip is a rule (flips a rule refuses are tried when no other tells)."""
    cls, rules = KINDS[kind]
    port = nvfp4_quant if kind == "nvfp4" else scheme_quant
    for checked, rule in itertools.product((True, False), _bases(kind, axis).values()):
        for value in _alternatives(cls, rules, axis):
            flipped = _flipped(rule, axis, value, checked)
            if value == getattr(rule, axis) or flipped is None:
                continue
            element = "e2m1fn" if kind == "nvfp4" else rule.element
            for x in _rows(element):
                if _run(kind, port, x, rule) != _run(kind, port, x, flipped):
                    return rule, value, x, checked
    return None


@pytest.mark.parametrize(("kind", "axis"), AXES, ids=IDS)
def test_the_port_and_the_reference_read_every_axis(kind: str, axis: str) -> None:
    found = _flip(kind, axis)
    if (kind, axis) in NOT_READ:
        assert found is None, f"{axis}: declared not read, yet the port reads it"
        return
    assert found is not None, (
        f"{kind} axis {axis}: no flip of a named rule changes the port's output on GQ's "
        "population: fp8lab/kernels/scheme.py ignores it (or no population row tells)"
    )
    rule, value, x, checked = found
    ref = _ref if kind == "nvfp4" else reference_scheme_quant
    assert _run(kind, ref, x, rule) != _run(kind, ref, x, _flipped(rule, axis, value, checked)), (
        f"{kind} axis {axis}: {rule.name} with {axis} = {value!r} changes the port's output on a "
        "row, not the reference's: fp8lab/refs (schemes.py, nvfp4.py) ignores it"
    )


@pytest.mark.parametrize(("kind", "axis"), AXES, ids=IDS)
def test_the_candidates_vary_every_axis_or_say_why_not(kind: str, axis: str) -> None:
    varied, held = (NVFP4_AXES, NVFP4_HELD_FIXED) if kind == "nvfp4" else (ENUM_AXES, HELD_FIXED)
    where = "fp8lab/gates/" + ("nvfp4_candidates.py" if kind == "nvfp4" else "rule_candidates.py")
    assert (axis in varied) != (axis in held), (
        f"{kind} axis {axis}: rules infer's candidates must vary it or hold it fixed with a "
        f"reason, not {'both' if axis in varied else 'neither'} ({where})"
    )
    base = field_kinds(KINDS[kind][0])[axis].base
    if axis in varied and (base is bool or issubclass(base, enum.Enum)):
        every = {True, False} if base is bool else set(base)
        tried = set(varied[axis])  # type: ignore[call-overload]
        assert every <= tried, f"{kind} axis {axis}: the candidates never try {every - tried}"


def test_the_nan_code_axis_is_read_by_gqs_plan() -> None:
    rule = RULES["ocp-floor"]
    any_code = dataclasses.replace(rule, name="any", nan_code=NanCode.ANY)
    assert not _plan("mxfp8", rule)[0].same_nan and _plan("mxfp8", any_code)[0].same_nan


@pytest.mark.parametrize(("kind", "axis"), AXES, ids=IDS)
def test_the_mutant_catalogue_breaks_every_axis_or_says_why_not(kind: str, axis: str) -> None:
    breaking = [
        name
        for name, axes in MUTANT_AXES.items()
        if axis in axes
        and any(
            (scheme == "nvfp4") == (kind == "nvfp4") for scheme, _ in SCHEME_MUTANTS[name].gated_as
        )
    ]
    excused = (kind, axis) in WITHOUT_MUTANT
    assert bool(breaking) != excused, (
        f"{kind} axis {axis}: no catalogue mutant breaks it and no reason is given "
        "(fp8lab/mutants/scheme_mutants.py MUTANT_AXES, WITHOUT_MUTANT)"
        if not excused
        else f"{kind} axis {axis}: excused in WITHOUT_MUTANT, yet {breaking} break it"
    )


def test_the_axis_tables_name_only_real_fields_and_mutants() -> None:
    assert set(MUTANT_AXES) <= set(SCHEME_MUTANTS)
    named = {(k, a) for k, a in AXES}
    for name, axes in MUTANT_AXES.items():
        kinds = {"nvfp4" if s == "nvfp4" else "scale" for s, _ in SCHEME_MUTANTS[name].gated_as}
        assert all((k, a) in named for k in kinds for a in axes), name
    assert set(WITHOUT_MUTANT) <= named
    assert set(HELD_FIXED) <= {a for k, a in AXES if k == "scale"}
    assert set(NVFP4_HELD_FIXED) <= {a for k, a in AXES if k == "nvfp4"}


def test_a_port_or_a_reference_that_ignores_an_axis_goes_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def deaf(quant: Any) -> Any:  # reads every field but signed_zero, which it takes as "keep"
        keep = RULES["vllm-per-tensor"].signed_zero
        return lambda x, rule: quant(x, dataclasses.replace(rule, signed_zero=keep))

    module = __import__(__name__, fromlist=["_rows"])
    monkeypatch.setattr(module, "scheme_quant", deaf(scheme_quant))
    with pytest.raises(
        AssertionError, match=r"scale axis signed_zero: .*kernels/scheme.py ignores"
    ):
        test_the_port_and_the_reference_read_every_axis("scale", "signed_zero")
    monkeypatch.undo()
    monkeypatch.setattr(module, "reference_scheme_quant", deaf(reference_scheme_quant))
    with pytest.raises(AssertionError, match=r"scale axis signed_zero: .*refs .* ignores it"):
        test_the_port_and_the_reference_read_every_axis("scale", "signed_zero")
