"""The attempts log: one hash-chained line per run ever filed under a results root.

``<results>/attempts.log`` holds one JSON line per attempt, in the order they
were filed: its ``kind``, ``run_id``, ``outcome`` (``complete``, ``failed``,
``partial`` or ``interrupted``), its ``folder`` under the results root, the
sha256 of its manifest (``manifest_sha256``) and the sha256 of the line before
it (``prev``; :data:`GENESIS` for the first). ``entry`` says how the line got
there: ``filed`` by the runner as it filed the run, or ``adopted``: the run was
filed before the results root had a log, and the line records it as found when
the log was started (nothing is claimed about its history before that).

:func:`log_problems` names what the log and the folders disagree on: a line
whose folder is gone (a deleted attempt), a manifest that changed after it was
logged, a run folder no line names, a line that does not chain to the one
before. The log is evidence against edits that leave it alone; whoever can
rewrite every file under the results root can rewrite the chain too, so the
log is committed with the results and its history is git's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fp8lab.evidence.manifest import MANIFEST, scan_runs
from fp8lab.specs.file_text import NotRegularError, read_regular

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: appends are not serialised
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ATTEMPTS_LOG",
    "GENESIS",
    "OUTCOMES",
    "LogLine",
    "adopt_runs",
    "file_attempt",
    "log_problems",
    "read_log",
]

ATTEMPTS_LOG = "attempts.log"
GENESIS = "0" * 64  # the prev of the first line
OUTCOMES = ("complete", "failed", "partial", "interrupted")
MAX_LOG_BYTES = 64 << 20  # a line is a few hundred bytes: a larger log is refused unread
MAX_LINE_BYTES = 4096
_FIELDS = ("kind", "run_id", "outcome", "folder", "manifest_sha256", "prev", "entry")


@dataclass(frozen=True)
class LogLine:
    """One line of the log, as read: its number (from 1), its fields, its own hash."""

    number: int
    fields: dict[str, str]
    sha256: str


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line(fields: dict[str, str]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def read_log(results: Path) -> tuple[list[LogLine], list[str]]:
    """The log's lines and what is wrong with its text (empty: nothing); no log: no lines."""
    path = Path(results) / ATTEMPTS_LOG
    try:
        raw = read_regular(path, MAX_LOG_BYTES)
        if len(raw) > MAX_LOG_BYTES:
            return [], [f"{ATTEMPTS_LOG} is over {MAX_LOG_BYTES:,} bytes"]
    except FileNotFoundError:
        return [], []
    except NotRegularError as exc:
        return [], [str(exc)]
    except OSError as exc:
        return [], [f"{ATTEMPTS_LOG} unreadable: {exc.strerror}"]
    lines, problems, prev = [], [], GENESIS
    for number, text in enumerate(raw.split(b"\n")[:-1] if raw else [], 1):
        fields = _fields(text)
        if fields is None:
            problems.append(f"{ATTEMPTS_LOG} line {number} is not a log line")
            prev = _sha(text)
            continue
        if fields["prev"] != prev:
            problems.append(f"{ATTEMPTS_LOG} line {number} does not chain to the line before it")
        prev = _sha(text)
        lines.append(LogLine(number, fields, prev))
    if raw and not raw.endswith(b"\n"):
        problems.append(f"{ATTEMPTS_LOG} ends in a partial line")
    return lines, problems


def _fields(text: bytes) -> dict[str, str] | None:
    if len(text) > MAX_LINE_BYTES:
        return None
    try:
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    ok = isinstance(data, dict) and all(isinstance(data.get(k), str) for k in _FIELDS)
    return {k: data[k] for k in _FIELDS} if ok and data["outcome"] in OUTCOMES else None


@contextlib.contextmanager
def _locked(results: Path) -> Iterator[IO[bytes]]:
    """The log open for appending, under an exclusive lock (appends from many runners)."""
    results.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(results / ATTEMPTS_LOG, flags, 0o644)  # a FIFO planted there cannot block
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularError(f"{results / ATTEMPTS_LOG} is not a regular file")
    with os.fdopen(fd, "ab") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield handle


def _append(handle: IO[bytes], prev: str, fields: dict[str, str]) -> str:
    line = _line({**fields, "prev": prev})
    handle.write(line + b"\n")
    handle.flush()
    os.fsync(handle.fileno())
    return _sha(line)


def _manifest_sha(folder: Path) -> str:
    try:
        return _sha((folder / MANIFEST).read_bytes())
    except OSError:
        return ""


def _head(results: Path) -> tuple[str, set[str]]:
    """The hash of the log's last line (GENESIS: empty) and the folders it names."""
    path = results / ATTEMPTS_LOG
    raw = read_regular(path, MAX_LOG_BYTES) if path.is_file() else b""
    rows = raw.split(b"\n")[:-1]
    folders = {f["folder"] for f in (_fields(r) for r in rows) if f is not None}
    return (_sha(rows[-1]) if rows else GENESIS), folders


def _adopt(handle: IO[bytes], results: Path, prev: str, logged: set[str], but: Path | None) -> str:
    """Log every readable run not yet logged (except ``but``) as adopted; the new head."""
    for record in scan_runs(results):
        if record.corrupt or record.relative in logged or record.directory == but:
            continue
        fields = _fields_of(record.manifest, record.relative, "adopted")
        prev = _append(handle, prev, {**fields, "manifest_sha256": _manifest_sha(record.directory)})
    return prev


def adopt_runs(results: Path) -> int:
    """Start the log of a results root filed before it had one: one adopted line per run.

    Returns:
        How many runs were adopted.

    Raises:
        FileExistsError: if the log already has lines (only a new log adopts).
    """
    results = Path(results).resolve()
    with _locked(results) as handle:
        prev, logged = _head(results)
        if prev != GENESIS:
            raise FileExistsError(f"{results / ATTEMPTS_LOG} exists; only a new log adopts runs")
        _adopt(handle, results, prev, logged, None)
    return len(read_log(results)[0])


def file_attempt(
    results: Path, kind: str, run_id: str, outcome: str, staging: Path, folder: Path
) -> None:
    """Move a run from ``staging`` to ``folder`` and log it, both under the log's lock.

    A log started now first adopts the runs already filed. Moving and logging
    under one lock means no runner ever sees another's run filed but not yet
    logged (it would adopt it, and the run would be logged twice).

    Args:
        results: the results root.
        kind: what ran.
        run_id: its run id.
        outcome: one of :data:`OUTCOMES`.
        staging: the run's folder while it ran.
        folder: where it is filed (its manifest is hashed).

    Raises:
        FileExistsError: if ``folder`` exists (evidence is never overwritten).
    """
    results = Path(results).resolve()
    with _locked(results) as handle:
        if os.path.lexists(folder):
            raise FileExistsError(f"{folder} exists; evidence is never overwritten")
        os.rename(staging, folder)
        folder = Path(folder).resolve()
        prev, logged = _head(results)
        if prev == GENESIS:
            prev = _adopt(handle, results, prev, logged, folder)
        fields = {"kind": kind, "run_id": run_id, "outcome": outcome, "entry": "filed"}
        fields["folder"] = folder.relative_to(results).as_posix()
        _append(handle, prev, {**fields, "manifest_sha256": _manifest_sha(folder)})


def _fields_of(manifest: dict[str, Any], relative: str, entry: str) -> dict[str, str]:
    status = manifest["status"]
    return {
        "kind": manifest["kind"],
        "run_id": manifest["run_id"],
        "outcome": status if status in OUTCOMES else "failed",
        "folder": relative,
        "entry": entry,
    }


def log_problems(results: Path) -> list[tuple[str, str]]:
    """``(folder, problem)`` for each disagreement of the log and the run folders.

    A results root with runs and no log has one problem (the log is missing);
    one with neither has none.
    """
    results = Path(results)
    lines, text_problems = read_log(results)
    found = [("", p) for p in text_problems]
    runs = {r.relative: r for r in scan_runs(results)}
    if not (results / ATTEMPTS_LOG).exists():
        return [("", f"{len(runs)} runs and no {ATTEMPTS_LOG}")] if runs else []
    seen: set[str] = set()
    for line in lines:
        folder, outcome = line.fields["folder"], line.fields["outcome"]
        where = f"{ATTEMPTS_LOG} line {line.number}"
        if folder in seen:
            found.append((folder, f"{where} logs this folder a second time"))
        seen.add(folder)
        if folder not in runs:
            found.append((folder, f"{where}: the {outcome} attempt's folder is gone"))
        elif _manifest_sha(runs[folder].directory) != line.fields["manifest_sha256"]:
            found.append((folder, f"its manifest changed after {where} logged it"))
    unnamed = [r for r, record in runs.items() if r not in seen and not record.corrupt]
    found += [(r, f"a run folder that {ATTEMPTS_LOG} does not name") for r in unnamed]
    return found
