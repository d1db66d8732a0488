"""What a test pays to start: interpreter, numeric imports, notebook kernel, cluster, collection."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from fp8lab.runtime.locations import checkout_root
from fp8lab.runtime.timing import best_of

__all__ = ["command_seconds", "suite_costs"]

ROOT = checkout_root() or Path.cwd()  # the tests are priced only in a checkout
# Test files that pay each start-up cost: (label, strings any of which marks a file).
TEST_SITES: dict[str, tuple[str, ...]] = {
    "notebook kernel": ("write_notebook(", "run_notebook(", "papermill"),
    "subprocess": ("subprocess.", "gates_subprocess", "sys.executable"),
    "dask LocalCluster": ("open_cluster(", "--dask-local", "LocalCluster"),
}


def command_seconds(argv: list[str], repeats: int) -> float:
    """Best wall time of ``python ARGV`` in a fresh interpreter, after one warm-up run."""

    def once() -> None:
        subprocess.run(
            [sys.executable, *argv],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    return best_of(once, repeats)


def _tiny_notebook(directory: Path) -> Path:
    """A one-cell nbformat 4 notebook (``x = 1``) for the kernel start-up figure."""
    cell: dict[str, Any] = {"cell_type": "code", "id": "c0", "metadata": {}, "source": "x = 1"}
    cell |= {"execution_count": None, "outputs": []}
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb = {"cells": [cell], "metadata": {"kernelspec": kernelspec}, "nbformat": 4}
    nb["nbformat_minor"] = 5
    path = directory / "tiny.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _startup() -> dict[str, float | None]:
    """Seconds of a notebook kernel run, a LocalCluster start and the test collection."""
    out: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="fp8lab-bench-") as tmp:
        nb = _tiny_notebook(Path(tmp))
        argv = ["-m", "papermill", str(nb), str(Path(tmp) / "out.ipynb"), "--no-progress-bar"]
        out["notebook_kernel_seconds"] = command_seconds(argv, 1)
    if find_spec("distributed") is not None:
        code = "from fp8lab.runtime.cluster import open_cluster\nwith open_cluster(local=1): pass"
        out["cluster_start_seconds"] = command_seconds(["-c", code], 1)
    else:
        out["cluster_start_seconds"] = None
    out["collect_seconds"] = out["tests_collected"] = None
    if (ROOT / "tests").is_dir():
        argv = ["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"]
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, check=False
        )
        out["collect_seconds"] = time.perf_counter() - t0
        out["tests_collected"] = sum("::" in line for line in done.stdout.splitlines())
    return out


def _test_sites() -> dict[str, Any]:
    """Test files, and how many of them pay each start-up cost (by the strings they hold)."""
    files = sorted((ROOT / "tests").rglob("test_*.py")) if (ROOT / "tests").is_dir() else []
    texts = [f.read_text() for f in files]
    counts = {k: sum(any(m in t for m in marks) for t in texts) for k, marks in TEST_SITES.items()}
    slow = sum("pytest.mark.slow" in t for t in texts)
    return {"test_files": len(files), "files_by_cost": counts, "files_with_slow_tests": slow}


def suite_costs(
    interpreter: float, *, repeats: int, startup: bool, target: float
) -> dict[str, Any]:
    """The start-up costs a test pays and how many test files pay them."""
    code = "import fp8lab.codecs, fp8lab.sweeps.exhaustive, fp8lab.detect"
    out: dict[str, Any] = {
        "interpreter_seconds": interpreter,
        "numeric_import_seconds": command_seconds(["-c", code], repeats),
        "target_seconds": target,
        **_test_sites(),
    }
    keys = ("notebook_kernel_seconds", "cluster_start_seconds", "collect_seconds")
    out.update(_startup() if startup else dict.fromkeys((*keys, "tests_collected")))
    out["startup_measured"] = startup
    return out
