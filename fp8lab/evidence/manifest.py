"""Reading run manifests: every run under ``results/``, readable or ``corrupt``.

A manifest that is not valid JSON, is not an object, or lacks a field of the
right type is corrupt. A corrupt run is listed as such and never stops the
reading of any other run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fp8lab.specs.file_text import NotRegularError, read_regular

__all__ = [
    "AREAS",
    "MANIFEST",
    "STATUSES",
    "ManifestError",
    "RunRecord",
    "read_manifest",
    "scan_runs",
]

MANIFEST = "manifest.json"
STATUSES = ("complete", "failed", "partial")
MAX_MANIFEST_BYTES = 64 << 20  # a run's manifest is a few kB; a larger one is refused unread
AREAS = ("failed", "partial")  # results/<area>/<kind>/<run_id>/; complete runs sit at <kind>/
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "kind": str,
    "run_id": str,
    "status": str,
    "reason": str,
    "started": str,
    "params": dict,
    "files": dict,
}


class ManifestError(ValueError):
    """A manifest that cannot be read as a run record."""


@dataclass(frozen=True)
class RunRecord:
    """One run directory: its manifest, or why it is corrupt."""

    directory: Path
    relative: str
    manifest: dict[str, Any] = field(default_factory=dict)
    corrupt: str = ""


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path``, checked for the fields every run has.

    Raises:
        ManifestError: naming what is wrong.
    """
    try:
        raw = read_regular(path, MAX_MANIFEST_BYTES)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ManifestError(f"over {MAX_MANIFEST_BYTES:,} bytes")
        data = json.loads(raw)
    except NotRegularError as exc:
        raise ManifestError(str(exc)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"unreadable: {type(exc).__name__}: {exc}") from None
    except RecursionError:
        raise ManifestError("unreadable: nested too deep") from None
    if not isinstance(data, dict):
        raise ManifestError(f"not a JSON object but {type(data).__name__}")
    for name, kind in _FIELDS.items():
        if not isinstance(data.get(name), kind):
            got = "missing" if name not in data else type(data[name]).__name__
            raise ManifestError(f"field {name!r} is {got}")
    if data["status"] not in STATUSES:
        raise ManifestError(f"status {data['status']!r} is not one of {list(STATUSES)}")
    return data


def file_problems(directory: Path, manifest: dict[str, Any]) -> list[str]:
    """Files of a run that are gone or no longer match the sha256 in its manifest."""
    problems = []
    for name, digest in sorted(manifest["files"].items()):
        path = directory / name
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{name} changed")
    return problems


def scan_runs(results: Path) -> Iterator[RunRecord]:
    """Every run directory with a manifest (``<kind>/<id>/`` and ``<area>/<kind>/<id>/``)."""
    manifests = sorted(results.glob(f"*/*/{MANIFEST}"))
    for area in AREAS:
        manifests += sorted(results.glob(f"{area}/*/*/{MANIFEST}"))
    for path in manifests:
        parts = path.relative_to(results).parts
        if any(part.startswith(".") for part in parts) or (parts[0] in AREAS and len(parts) == 3):
            continue  # staging and scratch; <area>/<kind>/manifest.json is no run
        relative = path.parent.relative_to(results).as_posix()
        try:
            yield RunRecord(path.parent, relative, read_manifest(path))
        except ManifestError as exc:
            yield RunRecord(path.parent, relative, corrupt=str(exc))
