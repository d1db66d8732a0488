"""JSON Schemas of the records fp8lab writes, derived from the record types themselves.

Each record is a frozen dataclass; its schema follows from the field types
(``str`` a string, ``int`` an integer, ``float`` a number, a tuple or list an
array, ``X | None`` either, an enum its values, a nested dataclass a
reference), so the schema and the record cannot drift apart. Every field is
required and no other field is allowed. :data:`RECORDS` names the records; the
schemas are published under ``docs/schemas/`` (``python -m
fp8lab.evidence.schemas docs/schemas`` writes them) and the tests validate
real records against them.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from fp8lab.detect.records import ExposureRecord
from fp8lab.gates.records import GateResult
from fp8lab.sweeps.exhaustive import ExhaustiveRecord

__all__ = ["RECORDS", "record_schema", "write_schemas"]

# schema name -> record type: what `fp8lab gates --json` (a list of them), `fp8lab exhaustive
# --json` and `fp8lab detect --method brute --json` (in "entries") write
RECORDS: dict[str, type] = {
    "gate-result": GateResult,
    "exhaustive-record": ExhaustiveRecord,
    "exposure-record": ExposureRecord,
}
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _type(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_type(a, defs) for a in args]}
    if hint is type(None):
        return {"type": "null"}
    if hint is typing.Any:
        return {}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [m.value for m in hint]}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is str:
        return {"type": "string"}
    if origin in (tuple, list):
        item = args[0] if args else typing.Any
        return {"type": "array", "items": _type(item, defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type(args[1], defs)}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        name = hint.__name__
        if name not in defs:
            defs[name] = {}
            defs[name] = _object(hint, defs)
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no JSON Schema for the field type {hint!r}")


def _object(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    fields = [f.name for f in dataclasses.fields(cls)]
    return {
        "type": "object",
        "properties": {name: _type(hints[name], defs) for name in fields},
        "required": fields,
        "additionalProperties": False,
    }


def record_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the record :data:`RECORDS` names ``name``.

    Raises:
        KeyError: for a name that is not in :data:`RECORDS`.
    """
    cls = RECORDS[name]
    defs: dict[str, Any] = {}
    body = _object(cls, defs)
    schema = {"$schema": _DIALECT, "$id": f"{name}.schema.json", "title": cls.__name__, **body}
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def write_schemas(folder: Path) -> list[Path]:
    """Write every record's schema as ``folder/NAME.schema.json``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in RECORDS:
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(record_schema(name), indent=2, sort_keys=True) + "\n")
        out.append(path)
    return out


if __name__ == "__main__":
    for written in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(written)
