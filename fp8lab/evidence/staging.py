"""Who owns a staging directory, and what happens to one whose owner died.

A run holds an exclusive ``flock`` on ``.staging/<name>.lock`` from before
its staging directory exists until after it is renamed into place. The
kernel frees the lock when the owner dies, even by SIGKILL. A staging
directory whose lock can be taken is therefore orphaned: :func:`recover_orphans`
ends every process still tagged with it (see :mod:`fp8lab.runtime.proctree`) and files
it under ``failed/<kind>/<run_id>/`` with the reason ``orphaned``, logged as
an ``interrupted`` attempt. Until then :func:`leftovers` names it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import IO

from fp8lab.evidence.attempts import file_attempt

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock, no recovery
    fcntl = None  # type: ignore[assignment]

__all__ = ["ORPHANED", "claim", "leftovers", "recover_orphans", "release"]

ORPHANED = "orphaned: its runner died (SIGKILL or a crash) before filing it"
_NAME = re.compile(r"^(?P<kind>.+)-(?P<run_id>\d{8}T\d{12}Z-.+)$")


def _lock_path(staging: Path) -> Path:
    return staging.parent / f"{staging.name}.lock"


def claim(staging: Path) -> IO[str] | None:
    """Take the owner's lock for ``staging`` (before creating it); keep the handle open."""
    if fcntl is None:  # pragma: no cover
        return None
    staging.parent.mkdir(parents=True, exist_ok=True)
    handle = open(_lock_path(staging), "w")  # noqa: SIM115 - held for the run's life
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def release(staging: Path, handle: IO[str] | None) -> None:
    """Drop the lock taken by :func:`claim` (after the staging directory is gone)."""
    if handle is None:  # pragma: no cover
        return
    _lock_path(staging).unlink(missing_ok=True)
    handle.close()


def _file(staging: Path, results: Path) -> Path | None:
    match = _NAME.match(staging.name)
    kind, run_id = (match["kind"], match["run_id"]) if match else ("orphaned", staging.name)
    files = {
        p.relative_to(staging).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(staging.rglob("*"))
        if p.is_file()
    }
    stamp = dt.datetime.fromtimestamp(staging.stat().st_mtime, dt.UTC).isoformat()
    manifest = {
        "kind": kind,
        "run_id": run_id,
        "status": "failed",
        "reason": ORPHANED,
        "params": {},
        "summary": {},
        "started": stamp,
        "finished": dt.datetime.now(dt.UTC).isoformat(),
        "files": files,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    target = results / "failed" / kind / run_id
    if target.exists():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        file_attempt(results, kind, run_id, "interrupted", staging, target)
    except FileExistsError:
        return None
    return target


def recover_orphans(results: Path) -> list[Path]:
    """File every orphaned staging directory under ``results`` as failed; return where each went."""
    area = Path(results).resolve() / ".staging"
    if fcntl is None or not area.is_dir():  # pragma: no cover
        return []
    filed = []
    for staging in sorted(p for p in area.iterdir() if p.is_dir()):
        with open(_lock_path(staging), "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its owner is alive
            if not staging.is_dir():  # its owner filed it meanwhile
                _lock_path(staging).unlink(missing_ok=True)
                continue
            from fp8lab.runtime.proctree import kill_tree  # psutil: absent on a bare GPU image

            kill_tree(token=str(staging))
            target = _file(staging, Path(results).resolve())
            _lock_path(staging).unlink(missing_ok=True)
        if target is not None:
            filed.append(target)
    return filed


def _owner_alive(staging: Path) -> bool:
    """Whether a live runner holds ``staging``'s lock (a held lock is not taken here)."""
    try:
        handle = open(_lock_path(staging), "rb")  # noqa: SIM115 - closed below
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def leftovers(results: Path) -> list[tuple[str, str, str, str]]:
    """``(kind, folder, status, reason)`` of each staging directory under ``results``.

    ``interrupted`` when its runner is gone (killed before it filed the run;
    the next ``fp8lab evidence`` or ``prove`` files it as failed), ``running``
    while its runner holds the lock. ``folder`` is relative to ``results``.
    """
    area = Path(results) / ".staging"
    if fcntl is None or not area.is_dir():  # pragma: no cover
        return []
    found = []
    for staging in sorted(p for p in area.iterdir() if p.is_dir()):
        match = _NAME.match(staging.name)
        kind = match["kind"] if match else staging.name
        folder = f".staging/{staging.name}"
        if _owner_alive(staging):
            found.append((kind, folder, "running", "its runner is still writing it"))
        else:
            found.append((kind, folder, "interrupted", ORPHANED))
    return found
