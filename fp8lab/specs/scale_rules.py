"""Scale rules as data: every choice implementations make differently is a named field.

A rule turns one block of float32 values into one scale and the element codes.
The rules themselves are a data file, ``fp8lab/specs/rules/scale_rules.toml``,
one ``[[rule]]`` table each; a user's rule file has the same form
(:func:`read_rule_file`). This module is data only (standard library), so the exact reference
(:mod:`fp8lab.refs.schemes`) and the kernel port (:mod:`fp8lab.kernels.scheme`)
read the same declaration and share no code. Each rule's ``source`` names the
implementation it was read from, at a commit; the TransformerEngine NVFP4 lines
say where they could not be checked against the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from fp8lab.specs.formats import FORMATS
from fp8lab.specs.rule_axes import (
    AmaxNan,
    Apply,
    Arithmetic,
    Clamp,
    E8m0Exponent,
    E8m0Inf,
    E8m0Nan,
    E8m0NanBlock,
    E8m0Zero,
    ElementRounding,
    Granularity,
    NanCode,
    Pow2,
    Quotient,
    ScaleSource,
    SignedZero,
    Storage,
)
from fp8lab.specs.rule_file import (
    derived_rule,
    parse_tables,
    read_rule_text,
    rule_tables,
    tables_text,
)

__all__ = [
    "RULES",
    "AmaxNan",
    "Apply",
    "Clamp",
    "Granularity",
    "NanCode",
    "Pow2",
    "Quotient",
    "ScaleRule",
    "SignedZero",
    "Storage",
    "ElementRounding",
    "Arithmetic",
    "E8m0Zero",
    "E8m0Inf",
    "E8m0NanBlock",
    "E8m0Exponent",
    "ScaleSource",
    "E8m0Nan",
    "get_rule",
    "parse_rules",
    "read_rule_file",
    "read_rule_text",
    "rule_tables",
    "rule_text",
]


@dataclass(frozen=True)
class ScaleRule:
    """One implementation's rule, every choice named.

    Pipeline per block (float32 throughout): ``amax`` from ``amax_init`` (by
    lanes where ``amax_lanes`` says);
    ``amax = max(amax, amax_floor)``; ``amax = min(amax, scale_ub)``;
    ``s = amax (scale_from) element_max``; ``s = max(s, min_scale)`` (max and
    min as ``amax_nan`` says); ``s = zero_scale`` where ``s == 0``; ``pow2``;
    ``q = x (apply) s``; ``signed_zero``; ``clamp``; with ``arithmetic =
    "input"`` on bfloat16 input, ``s`` is rounded to bfloat16 right after its
    formula (``input_zero_scale`` then replaces a zero one) and ``q`` right
    after ``apply``; with ``"input-quotient"`` only ``q`` is;
    cast to ``element`` (RNE, or ties away as ``element_rounding`` says;
    SATFINITE, or with ``saturate = false`` overflow to inf or NaN), NaN to
    its canonical (positive) code:
    a NaN that reaches the cast has been through float32 arithmetic, which on
    NVIDIA GPUs yields the canonical positive NaN whatever the operands' signs
    (PTX ISA, floating-point NaN results; not checked on a GPU here). ``None``
    means the step is absent.

    Args:
        name: the fixed rule name.
        source: implementation, file and commit it describes.
        element: element format (catalogue name).
        scale_format: ``float32`` or ``e8m0fnu`` (bytes).
        granularity: what one scale covers.
        block: elements per block along a row (``BLOCK`` only).
        amax_nan: NaN in the reduction.
        amax_init: the reduction's start value (0 is the memset / neutral one).
        amax_floor: eps the amax is floored at, or None.
        scale_ub: upper bound on amax before the division, or None.
        scale_from: ``amax / M`` or ``amax * float32(1/M)``.
        min_scale: floor on the scale after the division, or None.
        pow2: power-of-two rounding of the scale.
        apply: ``x / s`` or ``x * float32(1/s)``; ``x * s`` for a multiplier.
        clamp: the clamp before the cast.
        quotient: the precision of the scale formula.
        storage: a divisor or a multiplier scale.
        nan_code: which NaN codes are right.
        signed_zero: whether a -0 quotient stays -0.
        zero_scale: the value a scale of exactly 0 is replaced by, or None.
        element_rounding: how the cast rounds a tie between two element values.
        arithmetic: the dtype of the scale and of the element quotient.
        input_zero_scale: with ``arithmetic = "input"``, what a zero scale
            becomes on bfloat16 input (``zero_scale`` stays float32's).
        e8m0_zero: what an e8m0 scale byte of 0 does to the elements.
        e8m0_inf: the e8m0 scale byte of an infinite amax.
        e8m0_nan_block: the elements of a block whose e8m0 byte is 0xFF.
        e8m0_exponent: how an e8m0 rule finds its power of two.
        e8m0_nan: the e8m0 scale byte of a NaN amax.
        amax_lanes: the lane width W of a vectorised amax, or None (one
            sequential max): element ``i`` of a block goes to lane ``i % W``,
            each lane is a NaN-propagating max from ``amax_init`` (numpy and
            torch ``maximum``, a vector max that keeps NaN), and the lanes are
            combined by ``fmaxf`` from ``amax_init``, which drops a lane that
            holds a NaN with every value in it (``amax_nan = "skip"`` only).
        saturate: whether the cast saturates (overflow to the largest finite
            magnitude) or not (to inf, or NaN in a format without inf).
        scale_source: computed from the amax (GQ), or given with ``x`` (G1).
    """

    name: str
    source: str
    element: str
    scale_format: str
    granularity: Granularity
    block: int | None
    amax_nan: AmaxNan
    amax_init: float
    amax_floor: float | None
    scale_ub: float | None
    scale_from: Apply
    min_scale: float | None
    pow2: Pow2
    apply: Apply
    clamp: Clamp
    quotient: Quotient = Quotient.FLOAT32
    storage: Storage = Storage.DIVISOR
    nan_code: NanCode = NanCode.CANONICAL
    signed_zero: SignedZero = SignedZero.KEEP
    zero_scale: float | None = None
    element_rounding: ElementRounding = ElementRounding.RNE
    arithmetic: Arithmetic = Arithmetic.FLOAT32
    input_zero_scale: float | None = None
    e8m0_zero: E8m0Zero = E8m0Zero.OCP
    e8m0_inf: E8m0Inf = E8m0Inf.NAN_BYTE
    e8m0_nan_block: E8m0NanBlock = E8m0NanBlock.ALL_NAN
    e8m0_exponent: E8m0Exponent = E8m0Exponent.BITS
    e8m0_nan: E8m0Nan = E8m0Nan.NAN_BYTE
    amax_lanes: int | None = None
    saturate: bool = True
    scale_source: ScaleSource = ScaleSource.AMAX

    def __post_init__(self) -> None:
        if (self.granularity is Granularity.BLOCK) != (self.block is not None):
            raise ValueError(f"{self.name}: a block size goes with BLOCK granularity only")
        byte_scale = self.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL)
        if byte_scale != (self.scale_format == "e8m0fnu"):
            raise ValueError(f"{self.name}: e8m0fnu scales go with the OCP_FLOOR/RCEIL rules")
        multiplier = self.storage is Storage.MULTIPLIER
        if multiplier != (self.apply is Apply.MULTIPLY) or self.scale_from is Apply.MULTIPLY:
            raise ValueError(f"{self.name}: apply = multiply goes with a multiplier scale only")
        if (multiplier or self.quotient is Quotient.FLOAT64) and byte_scale:
            raise ValueError(f"{self.name}: an e8m0 scale is a float32 divisor")
        if byte_scale and (self.zero_scale is not None or self.signed_zero is SignedZero.PLUS_ZERO):
            raise ValueError(f"{self.name}: zero_scale and signed_zero go with a float32 scale")
        if byte_scale and self.min_scale is not None:
            raise ValueError(f"{self.name}: min_scale goes with a float32 scale")
        e8m0_default = (E8m0Zero.OCP, E8m0Inf.NAN_BYTE, E8m0NanBlock.ALL_NAN, E8m0Nan.NAN_BYTE)
        e8m0 = (self.e8m0_zero, self.e8m0_inf, self.e8m0_nan_block, self.e8m0_nan)
        if not byte_scale and e8m0 != e8m0_default:
            raise ValueError(f"{self.name}: the e8m0_* choices go with an e8m0 scale")
        if self.e8m0_exponent is not E8m0Exponent.BITS and not byte_scale:
            raise ValueError(f"{self.name}: e8m0_exponent goes with an e8m0 scale")
        if self.e8m0_inf is E8m0Inf.EXPONENT_BITS and self.pow2 is not Pow2.OCP_FLOOR:
            raise ValueError(f"{self.name}: e8m0_inf = exponent-bits goes with pow2 = ocp-floor")
        if self.arithmetic is not Arithmetic.FLOAT32 and byte_scale:
            raise ValueError(
                f"{self.name}: arithmetic = {self.arithmetic.value} goes with a float32 scale"
            )
        if self.amax_lanes is not None and self.amax_nan is not AmaxNan.SKIP:
            raise ValueError(f"{self.name}: amax_lanes goes with amax_nan = skip")
        if (self.input_zero_scale is not None) != (
            self.arithmetic is Arithmetic.INPUT and self.zero_scale is not None
        ):
            raise ValueError(
                f"{self.name}: input_zero_scale goes with arithmetic = input and a zero_scale"
            )
        fmt = FORMATS.get(self.element)
        if not self.saturate and fmt is not None and not (fmt.has_inf or fmt.nan_codes):
            raise ValueError(f"{self.name}: {self.element} has no inf or NaN: it saturates")
        if self.scale_source is ScaleSource.GIVEN and _amax_keys(self) != _NEUTRAL:
            raise ValueError(
                f"{self.name}: a given scale is a float32 divisor or multiplier; the amax keys "
                "hold their neutral values (amax_nan skip, amax_init 0, scale_from divide, "
                "pow2 none, quotient float32; no floor, bound, minimum, zero scale or lanes)"
            )


# a given-scale rule's amax keys: one spelling of each static rule
_NEUTRAL: tuple[object, ...] = ("float32", AmaxNan.SKIP, 0.0, None, None, Apply.DIVIDE, None)
_NEUTRAL += (Pow2.NONE, Quotient.FLOAT32, None, None, None)


def _amax_keys(rule: ScaleRule) -> tuple[object, ...]:
    return (
        rule.scale_format,
        rule.amax_nan,
        rule.amax_init,
        rule.amax_floor,
        rule.scale_ub,
        rule.scale_from,
        rule.min_scale,
        rule.pow2,
        rule.quotient,
        rule.zero_scale,
        rule.input_zero_scale,
        rule.amax_lanes,
    )


def parse_rules(text: str, where: str = "rules") -> tuple[ScaleRule, ...]:
    """The rules of a rule file's text: ``[[rule]]`` tables, one key per :class:`ScaleRule` field.

    What each key holds follows from its field's type (:mod:`fp8lab.specs.rule_file`).

    Raises:
        ValueError: for text that is not TOML, no ``[[rule]]``, an unknown or
            missing key, a value of the wrong kind, a choice that is not one of
            its axis, a rule :class:`ScaleRule` refuses, or a name given twice.
    """
    return parse_tables(ScaleRule, text, where)


def rule_text(*rules: ScaleRule) -> str:
    """``rules`` as a rule file: the text :func:`parse_rules` reads back as the same rules."""
    return tables_text(*rules)


def read_rule_file(path: str | Path, max_bytes: int = 1 << 20) -> tuple[ScaleRule, ...]:
    """The rules of the rule file at ``path`` (at most ``max_bytes``).

    Raises:
        ValueError: as :func:`parse_rules`, or for a file that cannot be read or is too large.
    """
    return parse_rules(read_rule_text(path, max_bytes), str(path))


_DECLARED = parse_rules(
    resources.files("fp8lab.specs").joinpath("rules/scale_rules.toml").read_text("utf-8"),
    "fp8lab/specs/rules/scale_rules.toml",
)

RULES: MappingProxyType[str, ScaleRule] = MappingProxyType({r.name: r for r in _DECLARED})


def get_rule(rule: str | ScaleRule) -> ScaleRule:
    """Look a rule up by name, or pass a :class:`ScaleRule` through.

    A name ``BASE[AXIS=VALUE;...]`` is named rule ``BASE`` with those fields
    set (:func:`fp8lab.specs.rule_file.derived_rule`): ``rceil[e8m0_nan=zero-byte]``.

    Raises:
        ValueError: for an unknown name, listing the known ones, or a derived
            name that is no rule.
    """
    if isinstance(rule, ScaleRule):
        return rule
    if isinstance(rule, str) and "[" in rule:
        return derived_rule(rule, RULES)
    try:
        return RULES[rule]
    except (KeyError, TypeError):
        raise ValueError(f"unknown scale rule {rule!r}; known: {', '.join(RULES)}") from None
