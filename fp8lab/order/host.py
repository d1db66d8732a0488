"""The host facts a library's summation order depends on, measured where it runs.

A BLAS picks its sgemm kernel by CPU (or by ``OPENBLAS_CORETYPE``), tiles
by the cache size it is told, and splits work by thread count, so the tree
of one output of ``numpy.matmul`` is a fact of this host, never of another.
:func:`host_facts` records what was in force: the CPU model, numpy's BLAS
as threadpoolctl reports it (library, version, core type, threads), and the
environment variables that steer OpenBLAS.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from fp8lab.kernels.sources.library_facts import numpy_blas as blas_facts

__all__ = ["BLAS_ENV", "blas_facts", "cpu_model", "host_facts"]

BLAS_ENV = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OPENBLAS_THREAD_TIMEOUT",
)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` where it exists), else the platform's word."""
    info = Path("/proc/cpuinfo")
    try:
        for line in info.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def host_facts(target: dict[str, Any] | None = None) -> dict[str, Any]:
    """CPU, machine, numpy and its BLAS, and the BLAS environment variables set.

    With ``target`` (the facts the kernel's own process measured of the library
    that ran the product, :func:`fp8lab.kernels.sources.library_facts.library_facts`),
    the record names that library under ``target`` instead of numpy's BLAS, which
    is then named only when numpy ran the product.
    """
    if target is not None:
        return {
            "cpu": cpu_model(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "target": target,
            "environment": {name: os.environ[name] for name in BLAS_ENV if name in os.environ},
        }
    return {
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "blas": blas_facts(),
        "environment": {name: os.environ[name] for name in BLAS_ENV if name in os.environ},
    }
