from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fp8lab.evidence import MANIFEST, EvidenceRun
from fp8lab.runtime.atomic import write_atomic


def test_complete_run_is_moved_into_place_with_a_manifest(tmp_path: Path) -> None:
    with EvidenceRun(tmp_path, "proofs", {"a": 1}) as run:
        run.write_json("x.json", {"v": 1})
        run.summary = {"ok": True}
    assert run.final is not None and run.final.parent == tmp_path / "proofs"
    manifest = json.loads((run.final / MANIFEST).read_text())
    assert manifest["status"] == "complete"
    assert manifest["params"] == {"a": 1}
    digest = hashlib.sha256((run.final / "x.json").read_bytes()).hexdigest()
    assert manifest["files"]["x.json"] == digest
    for key in ("git", "code_hash", "packages", "machine", "started", "finished"):
        assert manifest[key]
    assert "numpy" in manifest["packages"]
    assert not list((tmp_path / ".staging").iterdir())


def test_failed_run_is_filed_as_failed_with_its_reason(tmp_path: Path) -> None:
    run = EvidenceRun(tmp_path, "proofs", {})

    def fail_midway() -> None:
        with run:
            run.write_json("partial.json", {})
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_midway()
    assert run.final is not None and run.final.parent == tmp_path / "failed" / "proofs"
    manifest = json.loads((run.final / MANIFEST).read_text())
    assert manifest["status"] == "failed" and "boom" in manifest["reason"]
    assert not (tmp_path / "proofs").exists()


def test_runs_started_together_never_collide(tmp_path: Path) -> None:
    runs = [EvidenceRun(tmp_path, "k", {"same": True}) for _ in range(5)]
    for run in runs:
        with run:
            pass
    assert len({r.final for r in runs}) == 5


def test_evidence_is_never_overwritten(tmp_path: Path) -> None:
    path = write_atomic(tmp_path / "a" / "r.json", b"1")
    with pytest.raises(FileExistsError, match="never overwritten"):
        write_atomic(path, b"2")
    assert path.read_bytes() == b"1"
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]
