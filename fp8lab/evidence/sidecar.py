"""JSON sidecars whose floats round-trip exactly: every float is written as hex.

``float.hex`` is exact for float32 and float64 values alike, and a reader gets
the value back with ``float.fromhex``. Integers, strings, booleans and None
are written as they are; numpy scalars and arrays become their Python forms.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from fp8lab.runtime.atomic import write_atomic

__all__ = ["from_hex_floats", "to_hex_floats", "write_sidecar"]


def to_hex_floats(obj: Any) -> Any:
    """Return ``obj`` with every float replaced by its ``float.hex`` string."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return to_hex_floats(asdict(obj))
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, np.ndarray):
        return to_hex_floats(obj.tolist())
    if isinstance(obj, np.generic):
        return to_hex_floats(obj.item())
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, float):
        return "nan" if math.isnan(obj) else obj.hex()
    if isinstance(obj, dict):
        return {str(k): to_hex_floats(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_hex_floats(v) for v in obj]
    raise TypeError(f"cannot write {type(obj).__name__} to a sidecar")


def from_hex_floats(text: str) -> float:
    """Read one float written by :func:`to_hex_floats`."""
    return math.nan if text == "nan" else float.fromhex(text)


def write_sidecar(directory: Path, name: str, obj: Any) -> Path:
    """Write ``obj`` as ``<directory>/<name>.json`` with hex floats; never overwrite."""
    text = json.dumps(to_hex_floats(obj), indent=2, sort_keys=True) + "\n"
    return write_atomic(Path(directory) / f"{name}.json", text.encode())
