"""``fp8lab gates`` in a subprocess, from a folder of user kernels (not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_gates"]

ROOT = Path(__file__).resolve().parents[2]


def run_gates(tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m fp8lab gates ARGV`` run in ``tmp``, which is also on the import path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp)])}
    return subprocess.run(
        [sys.executable, "-m", "fp8lab", "gates", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp,
        env=env,
        timeout=600,
    )
