"""``fp8lab gates`` from a folder of user kernels, here or in a subprocess (not a test module).

In this process by default (:func:`tests.in_process.run_main`: the folder is the
working folder and first on the import path, output and exit status as a
process would give them; the user's kernels still run in processes of their
own, as fp8lab runs them). ``process=True`` starts ``python -m fp8lab`` for the
tests whose fact only a process shows: how the command itself ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.in_process import run_main

__all__ = ["run_fp8lab", "run_gates"]

ROOT = Path(__file__).resolve().parents[2]


def run_gates(tmp: Path, *argv: str, process: bool = False) -> subprocess.CompletedProcess[str]:
    """``fp8lab gates ARGV`` run in ``tmp``, which is also on the import path."""
    return run_fp8lab(tmp, "gates", *argv, process=process)


def run_fp8lab(
    tmp: Path,
    *argv: str,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``fp8lab ARGV`` run in ``tmp`` (also on the import path), ``env`` added.

    ``timeout`` bounds a subprocess (``process=True``) only.
    """
    if not process:
        return run_main(argv, cwd=tmp, path=[ROOT, tmp], env=env)
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
