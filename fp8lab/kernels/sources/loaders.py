"""Every ``--kernel`` as the kernel object of its kind; a kernel that cannot be loaded, one error.

A ``MODULE:OBJ`` goes through the one Python loader
(:func:`fp8lab.kernels.sources.python.load_python_kernel`); ``path/lib.so:symbol``
through the C ABI (:func:`fp8lab.kernels.sources.shared.load_shared`). The kinds
are the gates' (:data:`fp8lab.specs.gates.KERNEL_KINDS`) and two more:
``callable``, any function, and ``encoder``, an exhaustive proof's float32 ->
codes. A kernel that cannot be loaded is a :class:`KernelLoadError`; the
command line prints it as one line (exit status 2). The kernel's child process
(:mod:`fp8lab.kernels.sources.child`) loads through here; importing this module
loads no numpy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from fp8lab.specs.gates import KERNEL_KINDS

__all__ = [
    "LOADER_KINDS",
    "RUN_KEYWORDS",
    "KernelLoadError",
    "as_kernel",
    "load_kernel_of_kind",
    "run_keywords",
    "wrap_function",
]

LOADER_KINDS = (*KERNEL_KINDS, "callable", "encoder")
RUN_KEYWORDS = ("fmt", "format", "saturate", "nan")


class KernelLoadError(ValueError):
    """The kernel cannot be loaded: a module that does not import, a name that is not there."""


def _load(source: str, protocol: type | None, kind: str, scheme: str | None = None) -> Any:
    """``MODULE:OBJ`` (a ``protocol`` object as it is, a function wrapped) or a library.

    Raises:
        KernelLoadError: for a failed import, a missing library or symbol, or an
            object that is neither a ``protocol`` object nor callable.
    """
    from fp8lab.kernels.sources.python import ImportSpecError, load_python_kernel
    from fp8lab.kernels.sources.shared_source import is_shared_source, split_shared_source

    if is_shared_source(source):  # path/lib.so:symbol, through the C ABI
        from fp8lab.kernels.sources.shared import load_shared

        abi = {"quant": "quant", "gemm": "matmul", "scheme": "scheme"}.get(kind)
        if abi is None:
            raise KernelLoadError(f"--kernel {source}: a library is not a {kind} kernel")
        if abi == "scheme" and scheme is None:
            raise KernelLoadError(
                f"--kernel {source}: a library needs --scheme (its scales' layout)"
            )
        try:
            path, symbol = split_shared_source(source)
            return load_shared(path, symbol, abi, scheme=scheme)  # type: ignore[arg-type]
        except ValueError as exc:
            raise KernelLoadError(f"--kernel: {exc}") from None
    try:
        return load_python_kernel(source, protocol, lambda name, f: wrap_function(kind, name, f))
    except ImportSpecError as exc:
        raise KernelLoadError(f"--kernel: {exc}") from None


def wrap_function(kind: str, name: str, func: Any) -> Any:
    """A bare function as the kernel object of ``kind``: quant and gemm wrap it, others take it.

    A quant function becomes a :class:`~fp8lab.kernels.protocols.FunctionKernel`
    (its ``nan_policy`` attribute kept as its declaration), a gemm function a
    :class:`~fp8lab.kernels.matmul_protocol.FunctionMatmulKernel` claiming vllm.cpp's model.
    """
    if kind == "quant":
        from fp8lab.kernels.protocols import FunctionKernel

        return FunctionKernel(name, func)
    if kind == "gemm":
        from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel

        return FunctionMatmulKernel(name, func)
    return func


def _protocol(kind: str) -> type | None:
    """The protocol a ``kind`` kernel object implements; None where any callable is one."""
    if kind == "quant":
        from fp8lab.kernels.protocols import QuantKernel

        return QuantKernel
    if kind == "gemm":
        from fp8lab.kernels.matmul_protocol import MatmulKernel

        return MatmulKernel
    return None


def as_kernel(kind: str, name: str, obj: Any) -> Any:
    """``obj`` as a ``kind`` kernel: a protocol object as it is, a bare function wrapped."""
    protocol = _protocol(kind)
    if protocol is not None and isinstance(obj, protocol):
        return obj
    return wrap_function(kind, name, obj) if callable(obj) else obj


def _quant(source: str, scheme: str | None) -> Any:
    return _load(source, _protocol("quant"), "quant")


def _gemm(source: str, scheme: str | None) -> Any:
    from fp8lab.kernels.matmul_protocol import MatmulSpec

    kernel = _load(source, _protocol("gemm"), "gemm")
    claimed = getattr(kernel, "spec", None)
    if claimed is not None and not isinstance(claimed, MatmulSpec):
        raise KernelLoadError(f"--kernel: {source!r} has spec {claimed!r}, not a MatmulSpec")
    return kernel


def _named(source: str, scheme: str | None) -> Any:
    """A callable named as the user named it, unless it has a name of its own."""
    target = _load(source, None, "callable")
    return target if getattr(target, "name", None) else _SourceNamed(source, target)


def _scheme(source: str, scheme: str | None) -> Any:
    """A GQ kernel, recorded under the ``--kernel`` the user gave (a library's path included)."""
    return _SourceNamed(source, _load(source, None, "scheme", scheme))


class _SourceNamed:
    """A callable recorded under its ``MODULE:OBJ``, its ``trace`` passed through."""

    def __init__(self, name: str, func: Any) -> None:
        self.name, self._func = name, func
        if callable(getattr(func, "trace", None)):
            self.trace = func.trace

    def __call__(self, *args: Any) -> Any:
        return self._func(*args)


def run_keywords(func: Callable[..., Any], fmt: str, saturate: bool, nan: str) -> dict[str, Any]:
    """The :data:`RUN_KEYWORDS` that ``func`` accepts, with the run's values."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # no introspectable signature: call it with x only
        return {}
    offered: dict[str, Any] = {"fmt": fmt, "format": fmt, "saturate": saturate, "nan": nan}
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    out = {k: v for k, v in offered.items() if k in params and params[k].kind in named}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        for key in ("fmt", "saturate", "nan"):
            if key not in params:
                out.setdefault(key, offered[key])
    return out


class _RunEncoder:
    """An exhaustive proof's ``MODULE:FUNC`` encoder, called with the run's keywords it takes."""

    def __init__(self, source: str, func: Any, run: dict[str, Any]) -> None:
        self.name, self._func = source, func
        self._keywords = run_keywords(func, str(run["fmt"]), bool(run["saturate"]), str(run["nan"]))
        self.receives = sorted(self._keywords)

    def __call__(self, x: Any) -> Any:
        return self._func(x, **self._keywords)


_LOADERS: dict[str, Callable[[str, str | None], Any]] = {
    "quant": _quant,
    "gemm": _gemm,
    "scheme": _scheme,
    "chain": _named,
    "callable": _named,
}


def load_kernel_of_kind(
    kind: str, source: str, scheme: str | None = None, run: dict[str, Any] | None = None
) -> Any:
    """The user's kernel of ``kind`` (:data:`LOADER_KINDS`); a scheme kernel for ``scheme``.

    A quant or gemm ``MODULE:OBJ`` is its protocol's object as it is, or a
    function wrapped (:func:`wrap_function`). An ``encoder`` is a
    ``MODULE:FUNC`` from float32 to codes, called with the keywords of ``run``
    (``fmt``, ``saturate``, ``nan``) that it takes.

    Raises:
        KernelLoadError: as the loader of that kind, or for an unknown kind.
    """
    if kind == "encoder":
        if not isinstance(run, dict) or not {"fmt", "saturate", "nan"} <= set(run):
            raise KernelLoadError(
                f"--kernel {source}: an encoder needs its run's fmt, saturate and nan"
            )
        return _RunEncoder(source, _load(source, None, "encoder"), run)
    if kind not in _LOADERS:
        raise KernelLoadError(f"unknown kernel kind {kind!r}; one of {', '.join(LOADER_KINDS)}")
    return _LOADERS[kind](source, scheme)
