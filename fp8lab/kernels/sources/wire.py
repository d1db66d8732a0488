"""Arguments and results of a kernel call as frame parts: JSON values and plain arrays.

Both sides of the isolated kernel (:mod:`fp8lab.kernels.sources.isolated` and
its child) encode with :func:`encode_value` and decode with
:func:`decode_value`. Arrays travel without pickle; a value that is neither an
array, a number, a string, a tuple nor a list is named by its type and comes
back as a :class:`Foreign` placeholder, so a gate fails it by type.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Foreign", "decode_value", "encode_value", "kernel_text", "plain_header", "type_name"]

MAX_TEXT = 400  # characters of one piece of text from a kernel's process (a name, a fault)
# controls, format characters (bidi overrides), surrogates, private and unassigned, separators
_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


@dataclass(frozen=True)
class Foreign:
    """A value the kernel returned that cannot cross: only its type's name did."""

    type_name: str

    def __repr__(self) -> str:
        return f"<a {self.type_name}>"


def kernel_text(value: Any, limit: int = MAX_TEXT) -> str:
    r"""``value`` as one line of plain text, safe for a terminal, HTML and XML.

    Text from a kernel's process (its name, a fault, a type's name) may hold a
    newline that prints a fake row, terminal escapes, or lone surrogates that
    no encoder writes: every control, format or separator character and every
    surrogate becomes its ``\x``/``\u`` escape, and the text is cut at ``limit``.
    """
    text = value if isinstance(value, str) else str(value)
    out = []
    for ch in text[: limit + 1]:
        if unicodedata.category(ch) in _ESCAPED:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}")
        else:
            out.append(ch)
    plain = "".join(out)
    return plain if len(text) <= limit else plain[:limit] + "..."


def plain_header(value: Any, depth: int = 0) -> Any:
    """A frame header from a kernel's process with every string in it made :func:`kernel_text`.

    Raises:
        ValueError: for a header nested deeper than 32.
    """
    if depth > 32:
        raise ValueError("a header nested deeper than 32")
    if isinstance(value, str):
        return kernel_text(value)
    if isinstance(value, list):
        return [plain_header(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {kernel_text(k, 80): plain_header(v, depth + 1) for k, v in value.items()}
    return value


def type_name(value: Any) -> str:
    """The name of ``value``'s type; of a :class:`Foreign` value, the type the kernel returned."""
    return value.type_name if isinstance(value, Foreign) else type(value).__name__


def encode_value(value: Any, arrays: list[np.ndarray]) -> Any:
    """``value`` as JSON, its arrays appended to ``arrays`` (referenced by index)."""
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype.hasobject:
            return {"foreign": "object array"}
        item: dict[str, Any] = {"scalar": isinstance(value, np.generic)}
        if array.dtype.type.__module__.startswith("ml_dtypes"):  # bfloat16, float8_*: raw bytes
            item["ml_dtype"] = array.dtype.name
            array = array.view(f"u{array.dtype.itemsize}")
        arrays.append(array)
        return {"array": len(arrays) - 1, **item}
    if value is None or isinstance(value, bool | int | float | str):
        return {"value": value}
    if isinstance(value, tuple | list):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [encode_value(v, arrays) for v in value]}
    return {"foreign": type(value).__name__}


def _ml_dtype(name: str, itemsize: int) -> np.dtype[Any]:
    import ml_dtypes

    kind = getattr(ml_dtypes, name, None)
    if not isinstance(kind, type) or np.dtype(kind).itemsize != itemsize:
        raise ValueError(f"not an ml_dtypes type of {itemsize} bytes: {name!r:.40}")
    return np.dtype(kind)


def decode_value(item: Any, arrays: list[np.ndarray], *, readonly: bool = False) -> Any:
    """The value :func:`encode_value` wrote; arrays read-only when ``readonly``.

    Raises:
        ValueError: for an item that is not one :func:`encode_value` writes.
    """
    if not isinstance(item, dict) or len(item) not in (1, 2, 3):
        raise ValueError(f"not an encoded value: {item!r:.80}")
    if "array" in item:
        array = arrays[int(item["array"])]
        if "ml_dtype" in item:
            array = array.view(_ml_dtype(str(item["ml_dtype"]), array.dtype.itemsize))
        if readonly:
            array.setflags(write=False)
        return array[()] if item.get("scalar") else array
    if "value" in item:
        return item["value"]
    if "tuple" in item:
        return tuple(decode_value(v, arrays, readonly=readonly) for v in item["tuple"])
    if "list" in item:
        return [decode_value(v, arrays, readonly=readonly) for v in item["list"]]
    if "foreign" in item:
        return Foreign(kernel_text(item["foreign"], 80))
    raise ValueError(f"not an encoded value: {item!r:.80}")
