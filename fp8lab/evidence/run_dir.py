"""Append-only run directories, built in staging and moved into place whole.

A run writes its files into ``<results>/.staging/<kind>-<run_id>/``. On
success a manifest with status ``complete`` is added and the directory is
renamed to ``<results>/<kind>/<run_id>/``; on failure the manifest says
``failed`` with the reason and the directory goes to
``<results>/failed/<kind>/<run_id>/``. A run that examined only part of what
its job covers (``partial=True``, e.g. ``fp8lab prove --stop``) completes with
status ``partial`` into ``<results>/partial/<kind>/<run_id>/``, never beside
the full runs. Each filed run is logged in the attempts log
(:mod:`fp8lab.evidence.attempts`); an interrupted one (SIGINT or SIGTERM) as
``interrupted``. A run id holds the UTC time, the short
git sha with a dirty mark, a parameter hash and the process id, so two runs
started together never collide, and an existing directory is never replaced.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import os
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from fp8lab.evidence.attempts import file_attempt
from fp8lab.evidence.manifest import MANIFEST
from fp8lab.evidence.provenance import provenance
from fp8lab.evidence.staging import claim, release
from fp8lab.runtime.atomic import write_atomic

__all__ = ["MANIFEST", "STAGING", "EvidenceRun"]

STAGING = ".staging"  # <results>/.staging/<kind>-<run_id>/ while a run is being written
_COUNTER = itertools.count()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def params_hash(params: dict[str, Any]) -> str:
    """Short sha256 of the canonical JSON of ``params``."""
    canonical = json.dumps(params, sort_keys=True, default=str).encode()
    return hashlib.sha256(canonical).hexdigest()[:8]


class EvidenceRun:
    """A context manager for one run's directory.

    Args:
        results: the results root.
        kind: what ran (a notebook or job name); the subdirectory.
        params: the parameters, recorded and hashed into the run id.
        partial: the run covers only part of its job; filed as ``partial``.
    """

    def __init__(
        self, results: Path, kind: str, params: dict[str, Any], *, partial: bool = False
    ) -> None:
        # Absolute: a notebook kernel runs in another working directory.
        self.results, self.kind, self.params = Path(results).resolve(), kind, params
        self.partial = partial
        self.started = _now()
        self.provenance = provenance()
        git = self.provenance["git"]
        sha = git["short"] + ("-dirty" if git["dirty"] else "")
        stamp = self.started.strftime("%Y%m%dT%H%M%S%fZ")
        self.run_id = f"{stamp}-{sha}-p{params_hash(params)}-{os.getpid()}-{next(_COUNTER)}"
        self.staging = self.results / STAGING / f"{kind}-{self.run_id}"
        self.final: Path | None = None
        self.summary: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self._owner: IO[str] | None = None

    def __enter__(self) -> EvidenceRun:
        self._owner = claim(self.staging)  # before the directory exists: see staging.py
        self.staging.mkdir(parents=True)
        return self

    def write_json(self, name: str, obj: Any) -> Path:
        """Write ``obj`` as indented JSON into the run."""
        text = obj if isinstance(obj, str) else json.dumps(obj, indent=2, sort_keys=True)
        return write_atomic(self.staging / name, (text + "\n").encode())

    def _manifest(self, status: str, reason: str) -> dict[str, Any]:
        files = {
            p.relative_to(self.staging).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.staging.rglob("*"))
            if p.is_file()
        }
        return {
            "kind": self.kind,
            "run_id": self.run_id,
            "status": status,
            "reason": reason,
            "params": self.params,
            "summary": self.summary,
            "started": self.started.isoformat(),
            "finished": _now().isoformat(),
            **self.provenance,
            **self.extra,
            "files": files,
        }

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            status, area = "failed", self.results / "failed" / self.kind
        elif self.partial:
            status, area = "partial", self.results / "partial" / self.kind
        else:
            status, area = "complete", self.results / self.kind
        reason = "" if exc is None else f"{type(exc).__name__}: {exc}"
        self.write_json(MANIFEST, self._manifest(status, reason))
        area.mkdir(parents=True, exist_ok=True)
        target = area / self.run_id
        outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else status
        file_attempt(self.results, self.kind, self.run_id, outcome, self.staging, target)
        release(self.staging, self._owner)
        self.final = target
