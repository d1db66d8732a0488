"""Rule files read and written from a rule's field types: one reader and one writer for every kind.

A rule file is TOML, one ``[[rule]]`` table per rule, one key per field of the
rule's frozen dataclass (:class:`~fp8lab.specs.scale_rules.ScaleRule`,
:class:`~fp8lab.specs.nvfp4_rules.Nvfp4ScaleRule`). What a key may hold
follows from its field's annotation, so the reader, the writer and the rule
cannot drift apart: an enum its values; ``str`` a non-empty string; ``float``
a number; ``int`` a positive whole number (a count); ``bool`` true or false;
``tuple[float, float]`` an array of two numbers; ``X | None`` the same, or
the key left out (None). A field with no default and no ``None`` is a
required key. Every error is one line naming the file, the rule and the key.
Standard library only (``tomllib`` reads; the writer is the few forms above).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import tomllib
import types
import typing
from collections.abc import Hashable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from fp8lab.specs.file_text import NotRegularError, read_regular, toml_depth

MAX_TOML_DEPTH = 64  # as JSON and YAML (fp8lab.runtime.bounded); a rule file nests 2 deep

__all__ = [
    "MAX_TOML_DEPTH",
    "derived_rule",
    "derived_name",
    "field_kinds",
    "parse_tables",
    "read_rule_text",
    "rule_tables",
    "tables_text",
]

R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class _Kind:
    """What one field's key holds: its base type, tuple arity (0: none), and whether None."""

    base: type
    optional: bool
    required: bool
    arity: int = 0


def field_kinds(cls: type) -> dict[str, _Kind]:
    """Each field of the rule dataclass ``cls`` and what its key holds, in field order.

    Raises:
        TypeError: for a field type a rule file cannot hold.
    """
    return _kinds(cls)


@cache
def _kinds(cls: Hashable) -> dict[str, _Kind]:
    assert isinstance(cls, type)
    hints = typing.get_type_hints(cls)
    kinds = {}
    for f in dataclasses.fields(cls):
        hint, optional = hints[f.name], False
        if typing.get_origin(hint) in (typing.Union, types.UnionType):
            rest = [a for a in typing.get_args(hint) if a is not type(None)]
            hint, optional = rest[0], len(rest) < len(typing.get_args(hint))
            if len(rest) != 1:
                raise TypeError(f"{cls.__name__}.{f.name}: one type or None, got {hint!r}")
        arity = 0
        if typing.get_origin(hint) is tuple:
            items = typing.get_args(hint)
            if not items or any(a is not float for a in items):
                raise TypeError(f"{cls.__name__}.{f.name}: a tuple of floats only")
            hint, arity = float, len(items)
        if not (hint in (str, float, int, bool) or issubclass(hint, enum.Enum)):
            raise TypeError(f"{cls.__name__}.{f.name}: no rule-file form for {hint!r}")
        has_default = f.default is not dataclasses.MISSING
        kinds[f.name] = _Kind(hint, optional, not (has_default or optional), arity)
    return kinds


def _number(key: str, value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: {key} = {value!r:.40} is not a number")
    return float(value)


def _value(key: str, kind: _Kind, value: object, where: str) -> object:
    """``value`` of key ``key`` as its field holds it; ValueError naming the key if it is not."""
    base = kind.base
    if kind.arity:
        if not isinstance(value, list) or len(value) != kind.arity:
            form = ", ".join(["number"] * kind.arity)
            raise ValueError(f"{where}: {key} must be [{form}]")
        return tuple(_number(key, v, where) for v in value)
    if issubclass(base, enum.Enum):
        try:
            return base(value)
        except ValueError:
            choices = ", ".join(str(m.value) for m in base)
            raise ValueError(f"{where}: {key} = {value!r:.40}; one of {choices}") from None
    if base is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{where}: {key} must be true or false")
        return value
    if base is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: {key} = {value!r:.40} is not a positive whole number")
        return value
    if base is float:
        return _number(key, value, where)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: {key} must be a non-empty string")
    return value


def _table(cls: type[R], entry: dict[str, object], where: str) -> R:
    """One ``[[rule]]`` table as a ``cls``; every key checked against its field's type."""
    kinds = field_kinds(cls)
    unknown = sorted(set(entry) - set(kinds))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys: {', '.join(kinds)}")
    missing = [k for k, kind in kinds.items() if kind.required and k not in entry]
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")
    values = {k: _value(k, kinds[k], v, where) for k, v in entry.items()}
    for k, kind in kinds.items():
        if kind.optional and k not in values:
            values[k] = None
    try:
        return cls(**values)
    except ValueError as exc:  # the rule's own checks, which name the rule
        raise ValueError(f"{where}: {exc}") from None


def parse_tables(cls: type[R], text: str, where: str = "rules") -> tuple[R, ...]:
    """The ``cls`` rules of a rule file's text, one per ``[[rule]]`` table.

    Raises:
        ValueError: for text that is not TOML, no ``[[rule]]``, an unknown or
            missing key, a value of the wrong kind or not one of its axis, a
            rule ``cls`` refuses, or a name given twice.
    """
    entries = rule_tables(text, where)
    rules = tuple(_table(cls, e, f"{where}, rule {i + 1}") for i, e in enumerate(entries))
    names = [getattr(r, "name", i) for i, r in enumerate(rules)]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: a rule name given twice")
    return rules


def _toml(value: object, kind: _Kind) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v, dataclasses.replace(kind, arity=0)) for v in value) + "]"
    if kind.base is float:
        return repr(float(value))  # type: ignore[arg-type]  # shortest round trip; inf, nan
    if isinstance(value, str):  # a JSON string is a TOML basic string, but for DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    return str(value)


def tables_text(*rules: Any) -> str:
    """``rules`` as a rule file: the text :func:`parse_tables` reads back as the same rules.

    A field that is None is left out.
    """
    lines: list[str] = []
    for rule in rules:
        lines.append("[[rule]]")
        for key, kind in field_kinds(type(rule)).items():
            value = getattr(rule, key)
            if value is not None:
                lines.append(f"{key} = {_toml(value, kind)}")
        lines.append("")
    return "\n".join(lines)


def rule_tables(text: str, where: str, table: str = "rule") -> list[dict[str, object]]:
    """The ``[[rule]]`` (or ``[[table]]``) tables of a rule file's text, unchecked.

    Raises:
        ValueError: for text nested deeper than :data:`MAX_TOML_DEPTH`, not
            TOML, or holding anything but those tables.
    """
    if toml_depth(text, MAX_TOML_DEPTH) > MAX_TOML_DEPTH:
        raise ValueError(f"{where}: nested deeper than {MAX_TOML_DEPTH}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not TOML ({exc})") from None
    entries = data.get(table)
    if set(data) != {table} or not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: want one or more [[{table}]] tables and nothing else")
    return entries


def read_rule_text(path: str | Path, max_bytes: int = 1 << 20, kind: str = "rule") -> str:
    """The text of the ``kind`` file at ``path`` (at most ``max_bytes``, UTF-8).

    The file is opened without blocking, and a FIFO or device is refused
    (:func:`fp8lab.specs.file_text.read_regular`).

    Raises:
        ValueError: for a file that cannot be read, is not a regular file, is too
            large or not UTF-8.
    """
    try:
        raw = read_regular(path, max_bytes)
    except NotRegularError as exc:
        raise ValueError(f"{exc}; a {kind} file is read only from a regular file") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the {kind} file ({exc.strerror})") from None
    if len(raw) > max_bytes:
        raise ValueError(f"{path}: a {kind} file over {max_bytes} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8") from None


def derived_name(base: str, changes: Mapping[str, object]) -> str:
    """The name of rule ``base`` with ``changes``: ``BASE[AXIS=VALUE;...]``.

    Each value as a rule file writes it, without quotes; None is ``none``. A
    ``base`` that is itself derived keeps one bracket: ``rceil[e8m0_nan=zero-byte]``
    with ``scale_from`` divide is ``rceil[e8m0_nan=zero-byte;scale_from=divide]``
    (a change of a key it sets replaces that key's value).
    """
    root, bracket, rest = base.partition("[")
    items: dict[str, str] = {}
    if bracket and rest.endswith("]"):
        items = dict(item.partition("=")[::2] for item in rest[:-1].split(";"))
    else:
        root = base
    items.update((k, _text(v)) for k, v in changes.items())
    return f"{root}[{';'.join(f'{k}={v}' for k, v in items.items())}]"


def _text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def derived_rule(name: str, rules: Mapping[str, R]) -> R:
    """The rule ``BASE[AXIS=VALUE;...]``: named rule ``BASE`` of ``rules`` with those fields set.

    Each value is read as its field's type says (a rule file's value without
    quotes; ``none`` leaves an optional field out). The rule is named ``name``.

    Raises:
        ValueError: for a name not of that form, an unknown base or key, a value
            its field does not hold, or a rule the rule type refuses.
    """
    base, _, rest = name.partition("[")
    if base not in rules or not rest.endswith("]") or len(rest) < 3:
        raise ValueError(f"{name!r}: want BASE[AXIS=VALUE;...], BASE one of {', '.join(rules)}")
    rule = rules[base]
    kinds = field_kinds(type(rule))
    changes: dict[str, object] = {}
    for item in rest[:-1].split(";"):
        key, _, text = item.partition("=")
        if key not in kinds or key in ("name", "source"):
            raise ValueError(f"{name!r}: unknown key {key!r}; the keys: {', '.join(kinds)}")
        if text == "none" and kinds[key].optional:
            changes[key] = None
            continue
        try:
            value: object = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        changes[key] = _value(key, kinds[key], value, repr(name))
    try:
        source = f"{getattr(rule, 'source', base)}; with {rest[:-1]}"
        return dataclasses.replace(rule, name=name, source=source, **changes)  # type: ignore[type-var]
    except ValueError as exc:
        raise ValueError(f"{name!r}: {exc}") from None
