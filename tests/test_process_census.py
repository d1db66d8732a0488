"""scripts/process-census counts the processes a command starts, orphans included, by kind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "process-census"

# a child the command waits for and a grandchild it orphans, each spending about 0.4 CPU-s;
# the command exits 3 while the orphan still runs
COMMAND = """
import os, subprocess, sys, time
burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"
subprocess.run([sys.executable, "-c", burn, "waited"], check=True)
if os.fork() == 0:
    subprocess.Popen([sys.executable, "-c", burn, "orphaned"])
    os._exit(0)
time.sleep(0.2)
sys.exit(3)
"""


def test_the_census_counts_the_waited_and_the_orphaned_and_passes_the_status_on(
    tmp_path: Path,
) -> None:
    out = tmp_path / "census.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(out), "--", sys.executable, "-c", COMMAND],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    record = json.loads(out.read_text())
    for name in ("waited", "orphaned"):
        (proc,) = [p for p in record["processes"] if p["cmd"].endswith(f" {name}")]
        assert proc["cpu"] >= 0.25 and proc["kind"] == "python (other)", proc
    assert record["exit_status"] == 3 and record["busy_core_seconds"] > 0.5
    assert "process census:" in done.stderr and "python (other)" in done.stderr


def _sleeper(marker: str) -> str:
    """A command that sleeps with ``marker`` in its arguments, as source code that does not hold
    ``marker`` itself (the census's own command line holds that source)."""
    head, tail = marker[:8], marker[8:]
    return f"[sys.executable, '-c', 'import time; time.sleep(600)', {head!r} + {tail!r}]"


def _running(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except (OSError, ValueError):
            continue
    return found


def test_orphans_left_past_the_linger_are_ended_and_said(tmp_path: Path) -> None:
    marker = f"census-orphan-{uuid.uuid4().hex}"
    leave = f"import subprocess, sys\nsubprocess.Popen({_sleeper(marker)})"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--linger", "0.5", "--", sys.executable, "-c", leave],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "1 processes the command left were still running after 0.5 s; ended" in done.stderr
    assert _running(marker) == []


def test_a_sigterm_ends_the_command_and_what_it_started() -> None:
    marker = f"census-hang-{uuid.uuid4().hex}"
    hang = f"import subprocess, sys\nsubprocess.run({_sleeper(marker)})"
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--", sys.executable, "-c", hang],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _running(marker) == []
