"""NVFP4 rules as rule files: ``[[rule]]`` tables whose keys are the fields of an NVFP4 rule.

An NVFP4 rule file has the form of a scale-rule file (:mod:`fp8lab.specs.scale_rules`),
one ``[[rule]]`` table per rule, with the keys of
:class:`~fp8lab.specs.nvfp4_rules.Nvfp4ScaleRule`: ``order`` (the key that
marks it), ``clamp_block``, ``block``, ``element_source``, ``inverse``,
``tensor_scale``, ``block_bounds`` (``[lo, hi]``, or left out for none),
``amax_nan`` and ``nan_code``. :func:`read_any_rule_file` reads either kind.
"""

from __future__ import annotations

import enum
import json
from dataclasses import MISSING, fields
from pathlib import Path

from fp8lab.specs.nvfp4_rules import (
    Nvfp4Inverse,
    Nvfp4NanCode,
    Nvfp4Order,
    Nvfp4ScaleRule,
    Nvfp4TensorScale,
)
from fp8lab.specs.rule_axes import AmaxNan
from fp8lab.specs.scale_rules import ScaleRule, parse_rules, read_rule_text, rule_tables

__all__ = ["nvfp4_rule_text", "parse_nvfp4_rules", "read_any_rule_file"]

_ENUMS: dict[str, type[enum.Enum]] = {
    "order": Nvfp4Order,
    "inverse": Nvfp4Inverse,
    "tensor_scale": Nvfp4TensorScale,
    "amax_nan": AmaxNan,
    "nan_code": Nvfp4NanCode,
}
_KEYS = [f.name for f in fields(Nvfp4ScaleRule)]
_REQUIRED = [f.name for f in fields(Nvfp4ScaleRule) if f.default is MISSING]


def _value(value: object) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def nvfp4_rule_text(*rules: Nvfp4ScaleRule) -> str:
    """``rules`` as a rule file: the text :func:`parse_nvfp4_rules` reads back as the same rules."""
    lines: list[str] = []
    for rule in rules:
        lines.append("[[rule]]")
        lines += [
            f"{k} = {_value(getattr(rule, k))}" for k in _KEYS if getattr(rule, k) is not None
        ]
        lines.append("")
    return "\n".join(lines)


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} = {value!r:.40} is not a number")
    return float(value)


def _nvfp4_rule(entry: dict[str, object], where: str) -> Nvfp4ScaleRule:
    """One ``[[rule]]`` table as an :class:`Nvfp4ScaleRule`; every value checked."""
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys: {', '.join(_KEYS)}")
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")
    values = dict(entry)
    for key, kind in _ENUMS.items():
        if key in values:
            try:
                values[key] = kind(values[key])
            except ValueError:
                choices = ", ".join(str(m.value) for m in kind)
                got = f"{values[key]!r:.40}"
                raise ValueError(f"{where}: {key} = {got}; one of {choices}") from None
    for key in ("name", "source", "element_source"):
        if key in values and (not isinstance(values[key], str) or not values[key]):
            raise ValueError(f"{where}: {key} must be a non-empty string")
    if not isinstance(values["clamp_block"], bool):
        raise ValueError(f"{where}: clamp_block must be true or false")
    block = values.get("block", 16)
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise ValueError(f"{where}: block = {block!r:.40} is not a positive whole number")
    bounds = values.get("block_bounds")
    if bounds is not None:
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise ValueError(f"{where}: block_bounds must be [lo, hi]")
        values["block_bounds"] = tuple(_number(v, f"{where}: block_bounds") for v in bounds)
    return Nvfp4ScaleRule(**values)  # type: ignore[arg-type]


def parse_nvfp4_rules(text: str, where: str = "rules") -> tuple[Nvfp4ScaleRule, ...]:
    """The NVFP4 rules of a rule file's text.

    Raises:
        ValueError: for text that is not TOML, no ``[[rule]]``, an unknown or
            missing key, a value of the wrong kind or not one of its axis, or a
            name given twice.
    """
    entries = rule_tables(text, where)
    rules = tuple(_nvfp4_rule(e, f"{where}, rule {i + 1}") for i, e in enumerate(entries))
    if len({r.name for r in rules}) != len(rules):
        raise ValueError(f"{where}: a rule name given twice")
    return rules


def read_any_rule_file(
    path: str | Path, max_bytes: int = 1 << 20
) -> tuple[ScaleRule, ...] | tuple[Nvfp4ScaleRule, ...]:
    """The rules of the rule file at ``path``: NVFP4 rules if a table has ``order``, else scale.

    Raises:
        ValueError: for a file that cannot be read, is too large or not UTF-8,
            or as :func:`parse_nvfp4_rules` or :func:`~fp8lab.specs.scale_rules.parse_rules`.
    """
    text = read_rule_text(path, max_bytes)
    entries = rule_tables(text, str(path))
    if any(isinstance(e, dict) and "order" in e for e in entries):
        return parse_nvfp4_rules(text, str(path))
    return parse_rules(text, str(path))
