"""Readers of JSON and YAML that refuse oversized, over-deep or self-multiplying input.

Every document fp8lab reads from a file it did not write this run (a bundle, a
run's manifest, a ``--params`` file) goes through these, read by :func:`read_file`
(a regular file only, opened without blocking), so a hostile or
corrupt file is one :class:`BoundedInputError` naming what is wrong, never a
``RecursionError``, a hang or memory exhausted. YAML aliases (``*name``) are
refused before any object is built: a few hundred bytes of aliases can name
billions of values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from fp8lab.specs.file_text import NotRegularError, read_regular

__all__ = ["MAX_BYTES", "MAX_DEPTH", "BoundedInputError", "load_json", "load_yaml", "read_file"]

MAX_BYTES = 64 << 20
MAX_DEPTH = 64


class BoundedInputError(ValueError):
    """A document over its size or depth bound, with aliases, or not parseable."""


def read_file(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, opened without blocking, at most ``max_bytes``.

    Raises:
        BoundedInputError: for a FIFO, device or directory, or a file over ``max_bytes``.
        OSError: if it cannot be opened or read.
    """
    try:
        data = read_regular(path, max_bytes)
    except NotRegularError as exc:
        raise BoundedInputError(f"{what}: {exc}") from None
    if len(data) > max_bytes:
        raise BoundedInputError(f"{what}: over {max_bytes:,} bytes")
    return data


def _json_depth(text: str, limit: int) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings, stopping past ``limit``."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _check_size(data: str | bytes, what: str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise BoundedInputError(f"{what}: over {max_bytes:,} bytes")
    if isinstance(data, bytes):
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise BoundedInputError(f"{what}: not UTF-8 ({exc.reason})") from None
    return data


def load_json(
    data: str | bytes, what: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Any:
    """``json.loads`` after the size and nesting checks.

    Raises:
        BoundedInputError: naming ``what`` and the bound it broke, or the parse error.
    """
    text = _check_size(data, what, max_bytes)
    if _json_depth(text, max_depth) > max_depth:
        raise BoundedInputError(f"{what}: nested deeper than {max_depth}")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise BoundedInputError(f"{what}: not JSON ({exc})") from None


def load_yaml(
    data: str | bytes, what: str, *, max_bytes: int = 1 << 20, max_depth: int = MAX_DEPTH
) -> Any:
    """``yaml.safe_load`` after the size check, refusing aliases and deep nesting first.

    Raises:
        BoundedInputError: naming ``what`` and the bound it broke, or the parse error.
    """
    text = _check_size(data, what, max_bytes)
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise BoundedInputError(f"{what}: YAML anchors and aliases are not accepted")
            if isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                depth += 1
                if depth > max_depth:
                    raise BoundedInputError(f"{what}: nested deeper than {max_depth}")
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BoundedInputError(f"{what}: not YAML ({' '.join(str(exc).split())})") from None
