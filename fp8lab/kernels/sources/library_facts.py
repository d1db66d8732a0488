"""Which library ran a kernel's product, measured in the process that runs the kernel.

A GEMM's order and rounding are facts of the library that ran it, its version,
its backend and its thread count, so a record names them. The library is the
one the kernel names in a ``library`` attribute (on itself or on the function
it wraps), else the one of torch, onnxruntime and jax that the kernel's
module refers to (or, failing that, that the kernel's process has imported),
else numpy (its BLAS as threadpoolctl reports it); a kernel loaded from a
shared library through the C ABI is ``native``;
numpy's BLAS is named only for numpy. ``process_threads`` counts the threads
of the process at the time of asking (after the kernel was loaded).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["LIBRARIES", "library_facts", "numpy_blas"]

LIBRARIES = ("torch", "onnxruntime", "jax", "numpy")


def _declared(kernel: object) -> str | None:
    for obj in (kernel, getattr(kernel, "func", None), getattr(kernel, "_func", None)):
        name = getattr(obj, "library", None)
        if isinstance(name, str) and name in LIBRARIES:
            return name
    return None


def _referred(kernel: object) -> list[str]:
    """The libraries the modules of the kernel (and of the function it wraps) refer to."""
    found: list[str] = []
    for obj in (kernel, getattr(kernel, "func", None), getattr(kernel, "_func", None)):
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        if module is None and obj is not None:
            module = sys.modules.get(type(obj).__module__)
        for value in vars(module).values() if module is not None else ():
            root = str(getattr(value, "__name__", "") if isinstance(value, type(sys)) else "")
            root = root.split(".")[0] or str(getattr(value, "__module__", "") or "").split(".")[0]
            if root in LIBRARIES[:3] and root not in found:
                found.append(root)
    return found


def numpy_blas() -> dict[str, Any]:
    """Numpy's BLAS as threadpoolctl reports it (library, version, core type, threads).

    Other BLAS libraries may be loaded beside it (scipy's, which numba's linear
    algebra loads), and threadpoolctl lists them in no fixed order. Numpy's is
    the one inside numpy's own folders (a wheel's vendored copy), else the one
    that no package vendors; where neither singles one out, none is named.
    """
    import numpy
    from threadpoolctl import threadpool_info

    blas = [entry for entry in threadpool_info() if entry.get("user_api") == "blas"]
    entry = _numpys(blas, Path(numpy.__file__).resolve().parent)
    if entry is None:
        word = "not identified" if blas else "not reported"
        return {"library": word, "version": None, "core_type": None, "threads": None}
    return {
        "library": entry.get("internal_api", "unknown"),
        "version": entry.get("version"),
        "core_type": entry.get("architecture"),
        "threads": entry.get("num_threads"),
        "threading_layer": entry.get("threading_layer"),
    }


def _numpys(blas: list[dict[str, Any]], home: Path) -> dict[str, Any] | None:
    """Numpy's entry of threadpoolctl's BLAS entries, numpy installed at ``home``, or None."""
    own = (home, home.parent / "numpy.libs")
    paths = [Path(str(entry.get("filepath", ""))).resolve() for entry in blas]
    mine = [e for e, p in zip(blas, paths, strict=True) if any(p.is_relative_to(d) for d in own)]
    if len(mine) == 1:
        return mine[0]
    if mine:
        return None
    # a folder of libraries a package vendors: scipy.libs, numpy/.dylibs, ...
    shared = [
        e
        for e, p in zip(blas, paths, strict=True)
        if not any(d.name.endswith(".libs") or d.name == ".dylibs" for d in p.parents)
    ]
    return shared[0] if len(shared) == 1 else None


def _torch() -> dict[str, Any]:
    import torch

    config = torch.__config__.show().splitlines()
    onednn = next((ln.strip(" -") for ln in config if "MKL-DNN" in ln or "oneDNN" in ln), "")
    mkl = next((ln.strip(" -") for ln in config if "Math Kernel Library" in ln), "")
    return {
        "version": str(torch.__version__),
        "backend": "oneDNN/MKL CPU",
        "onednn": onednn,
        "mkl": mkl,
        "mkldnn_enabled": bool(torch._C._get_mkldnn_enabled()),
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "threads": int(torch.get_num_threads()),
    }


def _onnxruntime(kernel: object) -> dict[str, Any]:
    import onnxruntime

    func = getattr(kernel, "func", None)
    session = getattr(kernel, "session", None) or getattr(func, "session", None)
    threads: Any = "default (one per physical core)"
    if session is not None:
        set_to = int(session.get_session_options().intra_op_num_threads)
        threads = set_to or threads
    return {
        "version": str(onnxruntime.__version__),
        "backend": "MLAS (" + ", ".join(onnxruntime.get_available_providers()) + ")",
        "device": str(onnxruntime.get_device()),
        "threads": threads,
    }


def _jax() -> dict[str, Any]:
    import jax
    import jaxlib

    return {
        "version": str(jax.__version__),
        "jaxlib": str(getattr(jaxlib, "__version__", "")),
        "backend": f"XLA {jax.default_backend()}",
        "devices": [str(d) for d in jax.devices()],
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "threads": "XLA's CPU pool (one per core)",
    }


def _numpy() -> dict[str, Any]:
    import numpy as np

    blas = numpy_blas()
    return {"version": np.__version__, "backend": "BLAS", "blas": blas, "threads": blas["threads"]}


def _process_threads() -> int | None:
    try:
        import psutil

        return int(psutil.Process().num_threads())
    except Exception:  # noqa: BLE001 - a fact not measured is None
        return None


def library_facts(kernel: object = None) -> dict[str, Any]:
    """``{"library", "version", "backend", "threads", ...}`` for the library that ran ``kernel``.

    Where a library's facts cannot be read, ``error`` says why.
    """
    if type(kernel).__module__.startswith("fp8lab.kernels.sources.shared"):
        source = getattr(kernel, "name", "")
        return {"library": "native", "source": source, "process_threads": _process_threads()}
    loaded = _referred(kernel) or [name for name in LIBRARIES[:3] if name in sys.modules]
    name = _declared(kernel) or (loaded[0] if len(loaded) == 1 else None)
    facts: dict[str, Any] = {"library": name or "numpy"}
    if name is None and loaded:
        facts = {"library": "unknown", "loaded": loaded}
        return {**facts, "process_threads": _process_threads()}
    try:
        read = {"torch": _torch, "jax": _jax, "numpy": _numpy}
        facts.update(_onnxruntime(kernel) if name == "onnxruntime" else read[name or "numpy"]())
    except Exception as exc:  # noqa: BLE001 - a library that cannot say is recorded as such
        facts["error"] = f"{type(exc).__name__}: {exc}"
    facts["process_threads"] = _process_threads()
    return facts
