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

import enum
import json
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from fp8lab.specs.rule_axes import (
    AmaxNan,
    Apply,
    Arithmetic,
    Clamp,
    E8m0Exponent,
    E8m0Inf,
    E8m0NanBlock,
    E8m0Zero,
    ElementRounding,
    Granularity,
    NanCode,
    Pow2,
    Quotient,
    SignedZero,
    Storage,
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

    Pipeline per block (float32 throughout): ``amax`` from ``amax_init``;
    ``amax = max(amax, amax_floor)``; ``amax = min(amax, scale_ub)``;
    ``s = amax (scale_from) element_max``; ``s = max(s, min_scale)`` (max and
    min as ``amax_nan`` says); ``s = zero_scale`` where ``s == 0``; ``pow2``;
    ``q = x (apply) s``; ``signed_zero``; ``clamp``; with ``arithmetic =
    "input"`` on bfloat16 input, ``s`` is rounded to bfloat16 right after its
    formula (``input_zero_scale`` then replaces a zero one) and ``q`` right
    after ``apply``;
    SATFINITE cast to ``element`` (RNE, or ties away as ``element_rounding``
    says), NaN to its canonical (positive) code:
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
        e8m0_exponent: how an RCEIL rule rounds its scale up to a power of two.
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
        e8m0_default = (E8m0Zero.OCP, E8m0Inf.NAN_BYTE, E8m0NanBlock.ALL_NAN)
        if not byte_scale and (self.e8m0_zero, self.e8m0_inf, self.e8m0_nan_block) != e8m0_default:
            raise ValueError(f"{self.name}: the e8m0_* choices go with an e8m0 scale")
        if self.e8m0_exponent is not E8m0Exponent.BITS and self.pow2 is not Pow2.RCEIL:
            raise ValueError(f"{self.name}: e8m0_exponent goes with pow2 = rceil")
        if self.e8m0_inf is E8m0Inf.EXPONENT_BITS and self.pow2 is not Pow2.OCP_FLOOR:
            raise ValueError(f"{self.name}: e8m0_inf = exponent-bits goes with pow2 = ocp-floor")
        if self.arithmetic is Arithmetic.INPUT and byte_scale:
            raise ValueError(f"{self.name}: arithmetic = input goes with a float32 scale")
        if (self.input_zero_scale is not None) != (
            self.arithmetic is Arithmetic.INPUT and self.zero_scale is not None
        ):
            raise ValueError(
                f"{self.name}: input_zero_scale goes with arithmetic = input and a zero_scale"
            )


_ENUMS: dict[str, type[enum.Enum]] = {
    "granularity": Granularity,
    "amax_nan": AmaxNan,
    "scale_from": Apply,
    "pow2": Pow2,
    "apply": Apply,
    "clamp": Clamp,
    "quotient": Quotient,
    "storage": Storage,
    "nan_code": NanCode,
    "signed_zero": SignedZero,
    "element_rounding": ElementRounding,
    "arithmetic": Arithmetic,
    "e8m0_zero": E8m0Zero,
    "e8m0_inf": E8m0Inf,
    "e8m0_nan_block": E8m0NanBlock,
    "e8m0_exponent": E8m0Exponent,
}
_OPTIONAL = (
    "block",
    "amax_floor",
    "scale_ub",
    "min_scale",
    "zero_scale",
    "input_zero_scale",
)  # left out: None
_DEFAULTED = {f.name: f.default for f in fields(ScaleRule) if isinstance(f.default, enum.Enum)}
_NUMBERS = ("amax_init", "amax_floor", "scale_ub", "min_scale", "zero_scale", "input_zero_scale")


def _rule(entry: dict[str, object], where: str) -> ScaleRule:
    """One ``[[rule]]`` table as a :class:`ScaleRule`; every value checked."""
    keys = [f.name for f in fields(ScaleRule)]
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys: {', '.join(keys)}")
    missing = [k for k in keys if k not in entry and k not in _OPTIONAL and k not in _DEFAULTED]
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")
    values: dict[str, object] = {k: entry.get(k, _DEFAULTED.get(k)) for k in keys}
    for key, kind in _ENUMS.items():
        try:
            values[key] = kind(getattr(values[key], "value", values[key]))
        except ValueError:
            choices = ", ".join(str(m.value) for m in kind)
            raise ValueError(f"{where}: {key} = {values[key]!r:.40}; one of {choices}") from None
    for key in _NUMBERS:
        value = values[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"{where}: {key} = {value!r:.40} is not a number")
        values[key] = None if value is None else float(value)
    if values["block"] is not None and (
        isinstance(values["block"], bool) or not isinstance(values["block"], int)
    ):
        raise ValueError(f"{where}: block = {values['block']!r:.40} is not a whole number")
    for key in ("name", "source", "element", "scale_format"):
        if not isinstance(values[key], str) or not values[key]:
            raise ValueError(f"{where}: {key} must be a non-empty string")
    return ScaleRule(**values)  # type: ignore[arg-type]


def parse_rules(text: str, where: str = "rules") -> tuple[ScaleRule, ...]:
    """The rules of a rule file's text: ``[[rule]]`` tables, one key per :class:`ScaleRule` field.

    Raises:
        ValueError: for text that is not TOML, no ``[[rule]]``, an unknown or
            missing key, a value of the wrong kind, a choice that is not one of
            its axis, a rule :class:`ScaleRule` refuses, or a name given twice.
    """
    entries = rule_tables(text, where)
    rules = tuple(_rule(e, f"{where}, rule {i + 1}") for i, e in enumerate(entries))
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: a rule name given twice")
    return rules


def _toml_value(value: object) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, float):
        return repr(value)  # shortest round-trip form; inf and nan are TOML too
    return str(value)


def rule_text(*rules: ScaleRule) -> str:
    """``rules`` as a rule file: the text :func:`parse_rules` reads back as the same rules."""
    lines: list[str] = []
    for rule in rules:
        lines.append("[[rule]]")
        for f in fields(ScaleRule):
            value = getattr(rule, f.name)
            if value is not None:
                lines.append(f"{f.name} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def read_rule_file(path: str | Path, max_bytes: int = 1 << 20) -> tuple[ScaleRule, ...]:
    """The rules of the rule file at ``path`` (at most ``max_bytes``).

    Raises:
        ValueError: as :func:`parse_rules`, or for a file that cannot be read or is too large.
    """
    return parse_rules(read_rule_text(path, max_bytes), str(path))


def rule_tables(text: str, where: str) -> list[dict[str, object]]:
    """The ``[[rule]]`` tables of a rule file's text, unchecked.

    Raises:
        ValueError: for text that is not TOML or holds anything but ``[[rule]]`` tables.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not TOML ({exc})") from None
    entries = data.get("rule")
    if set(data) != {"rule"} or not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: want one or more [[rule]] tables and nothing else")
    return entries


def read_rule_text(path: str | Path, max_bytes: int = 1 << 20) -> str:
    """The text of the rule file at ``path`` (at most ``max_bytes``, UTF-8).

    Raises:
        ValueError: for a file that cannot be read, is too large or not UTF-8.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the rule file ({exc.strerror})") from None
    if len(raw) > max_bytes:
        raise ValueError(f"{path}: a rule file over {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8") from None
    return text


_DECLARED = parse_rules(
    resources.files("fp8lab.specs").joinpath("rules/scale_rules.toml").read_text("utf-8"),
    "fp8lab/specs/rules/scale_rules.toml",
)

RULES: MappingProxyType[str, ScaleRule] = MappingProxyType({r.name: r for r in _DECLARED})


def get_rule(rule: str | ScaleRule) -> ScaleRule:
    """Look a rule up by name, or pass a :class:`ScaleRule` through.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(rule, ScaleRule):
        return rule
    try:
        return RULES[rule]
    except (KeyError, TypeError):
        raise ValueError(f"unknown scale rule {rule!r}; known: {', '.join(RULES)}") from None
