"""The optional extras: what each brings, whether it is here, and the line that installs it.

fp8lab installed without extras runs every notebook. A part that needs an
extra asks :func:`absent`; where the extra is missing the part is PENDING or
``absent`` with the reason it returns, which ends with the install line
(``pip install 'fp8lab[torch]'``), never a failed run. Modules are looked up
with :func:`importlib.util.find_spec`, without importing them. The CUDA
headers and NVRTC are files, not modules: :mod:`fp8lab.cuda` searches for
them and names :data:`CUDA_HOST`'s install line when they are not found.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

__all__ = ["CUDA_HOST", "EXTRAS", "Extra", "absent", "install_line", "missing_modules"]


@dataclass(frozen=True)
class Extra:
    """One optional extra of ``pyproject.toml``.

    Attributes:
        name: the extra's name (``pip install 'fp8lab[NAME]'``).
        what: what it brings, as a reason names it (``"torch"``).
        modules: the import names it provides (none for header and library wheels).
    """

    name: str
    what: str
    modules: tuple[str, ...] = ()

    @property
    def install(self) -> str:
        """The command that installs it."""
        return f"pip install 'fp8lab[{self.name}]'"


CUDA_HOST = "cuda-host"
EXTRAS: dict[str, Extra] = {
    e.name: e
    for e in (
        Extra("torch", "torch", ("torch",)),
        Extra("triton", "triton", ("torch", "triton")),
        Extra("ecosystem", "the ecosystem libraries", ("torch", "torchao", "compressed_tensors")),
        Extra("onnx", "onnx and onnxruntime", ("onnx", "onnxruntime")),
        Extra("dask", "dask", ("dask", "distributed")),
        Extra(CUDA_HOST, "the CUDA headers and NVRTC"),
        Extra("cuda", "cupy", ("cupy",)),
    )
}


def install_line(name: str) -> str:
    """``pip install 'fp8lab[NAME]'`` for the extra ``name``.

    Raises:
        KeyError: for a name that is not an extra.
    """
    return EXTRAS[name].install


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that does not import; a spec-less module
        return False


def missing_modules(name: str, modules: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The modules of the extra ``name`` (or ``modules`` of it) that are not found here."""
    return tuple(m for m in (EXTRAS[name].modules if modules is None else modules) if not _found(m))


def absent(name: str, modules: tuple[str, ...] | None = None) -> str:
    """Empty where the extra ``name`` is installed, else why not and its install line.

    Args:
        name: the extra.
        modules: only these of its modules (the ecosystem's rows need one library each).
    """
    missing = missing_modules(name, modules)
    if not missing:
        return ""
    verb = "is" if len(missing) == 1 else "are"
    return f"{', '.join(missing)} {verb} absent: {install_line(name)}"
