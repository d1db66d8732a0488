"""scripts/process-census counts the processes a command starts, orphans included, by kind."""

from __future__ import annotations

import json
import subprocess
import sys
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
