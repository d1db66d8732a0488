"""The host facts a speed figure depends on, measured where the bench runs.

The same code runs at different speeds on two CPUs of the same size: numba
compiles for the host CPU (or for ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``),
numpy dispatches its loops by the CPU's features (less any named in
``NPY_DISABLE_CPU_FEATURES``), and thread counts decide how many cores a figure
had. :func:`host_facts` records them; the vector width numba emits is measured
by compiling a small loop and reading its machine code, not read off a name.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from pathlib import Path
from typing import Any

from fp8lab.order.host import cpu_model

__all__ = ["ENVIRONMENT", "host_facts", "host_lines", "numba_target", "numpy_simd"]

# Variables that change what a figure measures: compile targets, dispatch, threads.
ENVIRONMENT = (
    "NUMBA_CPU_NAME",
    "NUMBA_CPU_FEATURES",
    "NUMBA_NUM_THREADS",
    "NUMBA_THREADING_LAYER",
    "NPY_DISABLE_CPU_FEATURES",
    "ATEN_CPU_CAPABILITY",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OPENBLAS_THREAD_TIMEOUT",
)
LIBRARIES = ("numpy", "numba", "llvmlite", "ml_dtypes", "torch")
# CPU flags (as /proc/cpuinfo spells them) from the widest vector ISA down
ISA_FLAGS = (
    ("AVX-512", ("avx512f", "avx512bw", "avx512vl", "avx512cd", "avx512dq")),
    ("AVX2", ("avx2", "fma", "bmi2")),
    ("AVX", ("avx",)),
    ("SSE4.2", ("sse4_2",)),
)
_REGISTER_BITS = {"zmm": 512, "ymm": 256, "xmm": 128}


def _cpu_flags() -> set[str]:
    """The CPU's flags from ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")) and ":" in line:
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _isa(flags: set[str]) -> str:
    """The widest vector ISA whose first flag is present, or ``unknown``."""
    for name, needed in ISA_FLAGS:
        if needed[0] in flags:
            return name
    return "unknown"


def _vector_bits(asm: str) -> int:
    """The widest vector register the machine code names (0: none)."""
    found = {int(bits) for reg, bits in _REGISTER_BITS.items() if f"%{reg}" in asm}
    return max(found, default=0)


def numba_target() -> dict[str, Any]:
    """The CPU numba compiles for, where its features come from, and the vector width it emits.

    The width is measured: a loop of int32 arithmetic (what the bits engine
    does) is compiled uncached and its machine code searched for ``zmm``
    (512-bit), ``ymm`` (256) and ``xmm`` (128) registers.
    """
    try:
        import llvmlite.binding as ll  # type: ignore[import-untyped]
        import numba
        import numpy as np
        from numba.core import config
    except ImportError as exc:  # pragma: no cover - numba is a pinned dependency
        return {"absent": True, "reason": f"{exc.name} not importable"}

    name = getattr(config, "CPU_NAME", None) or ll.get_host_cpu_name()
    chosen = getattr(config, "CPU_FEATURES", None)
    if chosen is not None:
        features, source = str(chosen), "NUMBA_CPU_FEATURES"
    else:
        features, source = ll.get_host_cpu_features().flatten(), "host"
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}

    def probe(a: Any, out: Any) -> None:  # pragma: no cover - compiled
        for i in range(a.size):
            out[i] = np.int32((a[i] >> np.int32(3)) * np.int32(5) + np.int32(7))

    compiled = numba.njit(cache=False, boundscheck=False)(probe)
    compiled(np.zeros(64, np.int32), np.zeros(64, np.int32))
    asm = "\n".join(compiled.inspect_asm().values())
    return {
        "absent": False,
        "cpu_name": name,
        "features_from": source,
        "isa": _isa({f.replace(".", "_") for f in enabled}) if enabled else f"{name}'s own",
        "vector_bits": _vector_bits(asm),
        "threads": numba.get_num_threads(),
    }


def numpy_simd() -> dict[str, Any]:
    """The SIMD baseline numpy was built for and the dispatch targets this CPU runs."""
    umath = importlib.import_module("numpy._core._multiarray_umath")
    features = getattr(umath, "__cpu_features__", {})
    dispatch = getattr(umath, "__cpu_dispatch__", [])
    return {
        "baseline": list(getattr(umath, "__cpu_baseline__", [])),
        "dispatched": [d for d in dispatch if features.get(d)],
    }


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _huge_pages() -> str | None:
    """Transparent huge pages' mode (the bracketed word), or None where it is not reported."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    chosen = re.search(r"\[(\w+)\]", text)
    return chosen.group(1) if chosen else None


def host_facts() -> dict[str, Any]:
    """CPU, vector ISA, numba's target, numpy's dispatch, threads, memory and versions."""
    flags = _cpu_flags()
    torch = sys.modules.get("torch")  # read, never imported here
    return {
        "cpu": cpu_model(),
        "cpus": len(os.sched_getaffinity(0)),
        "cpus_online": os.cpu_count(),
        "cpu_isa": _isa(flags),
        "cpu_vector_flags": sorted(f for _, names in ISA_FLAGS for f in names if f in flags),
        "memory_gib": _memory_gib(),
        "transparent_huge_pages": _huge_pages(),
        "numba": numba_target(),
        "numpy_simd": numpy_simd(),
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "python": sys.version.split()[0],
        "versions": {name: _version(name) for name in LIBRARIES},
        "environment": {k: os.environ[k] for k in ENVIRONMENT if k in os.environ},
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }


def host_lines(h: dict[str, Any]) -> list[str]:
    """The facts as printed lines."""
    nb, npy = h["numba"], h["numpy_simd"]
    target = (
        "numba absent"
        if nb["absent"]
        else f"numba targets {nb['cpu_name']} ({nb['features_from']} features: {nb['isa']}), "
        f"emits {nb['vector_bits']}-bit vectors, {nb['threads']} threads"
    )
    versions = ", ".join(f"{k} {v}" for k, v in h["versions"].items() if v)
    env = ", ".join(f"{k}={v}" for k, v in h["environment"].items()) or "none set"
    torch = "" if h["torch_threads"] is None else f"; torch threads {h['torch_threads']}"
    return [
        f"host: {h['cpu']}, {h['cpus']} of {h['cpus_online']} cpus, {h['memory_gib']} GiB, "
        f"huge pages {h['transparent_huge_pages']}; CPU vector ISA {h['cpu_isa']}",
        f"  {target}; numpy SIMD baseline {' '.join(npy['baseline']) or '-'}, dispatched "
        f"{' '.join(npy['dispatched']) or '-'}{torch}",
        f"  python {h['python']}, {versions}; environment: {env}; load average {h['load_average']}",
    ]
