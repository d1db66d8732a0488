"""``fp8lab gates`` in a subprocess, from a folder of user kernels (not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_fp8lab", "run_gates"]

ROOT = Path(__file__).resolve().parents[2]


def run_gates(tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m fp8lab gates ARGV`` run in ``tmp``, which is also on the import path."""
    return run_fp8lab(tmp, "gates", *argv)


def run_fp8lab(
    tmp: Path, *argv: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m fp8lab ARGV`` run in ``tmp`` (also on the import path), ``env`` added."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp)])}
    return subprocess.run(
        [sys.executable, "-m", "fp8lab", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp,
        env=env,
        timeout=timeout,
    )
