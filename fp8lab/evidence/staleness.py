"""Whether the published run of each notebook is stale against the current source."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from fp8lab.evidence.provenance import code_hash
from fp8lab.evidence.run_dir import MANIFEST

__all__ = ["Freshness", "check_published"]


@dataclass(frozen=True)
class Freshness:
    """The newest complete run of one notebook against the current source."""

    notebook: str
    status: str  # "fresh", "stale" or "missing"
    run: str
    reason: str


def check_published(results: Path, notebooks: dict[str, Path]) -> list[Freshness]:
    """Compare each notebook's newest complete run with the package code and the notebook."""
    current_code = code_hash()
    rows = []
    for name, path in notebooks.items():
        manifests = sorted((results / name).glob(f"*/{MANIFEST}"))
        complete = [m for m in manifests if json.loads(m.read_text())["status"] == "complete"]
        if not complete:
            rows.append(Freshness(name, "missing", "", "no complete run"))
            continue
        newest = max(complete, key=lambda m: json.loads(m.read_text())["started"])
        data = json.loads(newest.read_text())
        reasons = []
        if data.get("code_hash") != current_code:
            reasons.append("package code changed")
        if data.get("notebook_sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
            reasons.append("notebook changed")
        status = "stale" if reasons else "fresh"
        rows.append(Freshness(name, status, newest.parent.name, "; ".join(reasons)))
    return rows
