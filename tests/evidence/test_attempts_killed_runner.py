"""A runner SIGKILLed mid-run leaves a staging folder: --check calls it an interrupted attempt,
and the next runner files it and logs it as one (a real process: only one leaves what SIGKILL
leaves)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.evidence.attempts import read_log
from fp8lab.evidence.staging import recover_orphans
from tests.evidence.test_attempts_log import ROOT, file_run, log_rows

pytestmark = pytest.mark.process


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    file_run(root)
    return root


def test_a_runner_killed_mid_run_is_an_interrupted_attempt(results: Path) -> None:
    code = (
        "import os, signal, sys\n"
        "from fp8lab.evidence import EvidenceRun\n"
        "run = EvidenceRun(sys.argv[1], 'proofs', {})\n"
        "run.__enter__()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code, str(results)], env=env, timeout=120)
    assert done.returncode == -signal.SIGKILL
    (row,) = log_rows(results)
    assert row.startswith("interrupted .staging/proofs-")
    (filed,) = recover_orphans(results)  # the next runner files it, and logs it
    lines, _ = read_log(results)
    assert lines[-1].fields["outcome"] == "interrupted"
    assert lines[-1].fields["folder"] == filed.relative_to(results.resolve()).as_posix()
    assert log_rows(results) == []
