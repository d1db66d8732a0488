"""Every ``--kernel`` of every subcommand, and GQ's ``--scheme`` and ``--rule``.

A ``MODULE:OBJ`` goes through the one Python loader
(:func:`fp8lab.kernels.sources.python.load_python_kernel`); ``path/lib.so:symbol``
through the C ABI (:func:`fp8lab.kernels.sources.shared.load_shared`). GQ's names
and rules are :mod:`fp8lab.cli.scheme_args`' (re-exported here). Bad values are a
:class:`CliError` (one line, exit status 2) that lists the valid names.

Importing this module loads no numpy: the loaders import what they need when
they run, so every subcommand's ``--help`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.scheme_args import add_scheme_arguments, file_rules, scheme_options

if TYPE_CHECKING:
    from fp8lab.kernels import QuantKernel
    from fp8lab.kernels.matmul_protocol import MatmulKernel

__all__ = [
    "KERNEL_KINDS",
    "add_scheme_arguments",
    "file_rules",
    "gate_kernel_kind",
    "load_callable",
    "load_chain_kernel",
    "load_foreign_kernel",
    "load_kernel",
    "load_matmul_kernel",
    "load_scheme_kernel",
    "load_user_object",
    "scheme_options",
]


def load_scheme_kernel(source: str, scheme: str | None = None) -> Any:
    """A GQ kernel: ``MODULE:FUNC``, or ``path/lib.so:symbol`` for ``scheme`` through the C ABI.

    A library's symbol has ``fp8lab_scheme_quant``'s signature
    (``fp8lab_nvfp4_quant``'s for nvfp4); the scheme fixes its scales' layout.

    Raises:
        CliError: for a failed import, a missing library or symbol, or an object
            that is not callable.
    """
    from fp8lab.kernels.sources.shared import load_shared
    from fp8lab.kernels.sources.shared_abi import is_shared_source, split_shared_source

    if is_shared_source(source):
        if scheme is None:
            raise CliError(f"--kernel {source}: a library needs --scheme (its scales' layout)")
        try:
            path, symbol = split_shared_source(source)
            return load_shared(path, symbol, "scheme", scheme=scheme)
        except ValueError as exc:
            raise CliError(f"--kernel: {exc}") from None
    return load_callable(source)


def load_callable(source: str) -> Any:
    """Import ``MODULE:OBJ`` and require it to be callable.

    Raises:
        CliError: if the import fails or the object is not callable.
    """
    from fp8lab.kernels.sources.python import ImportSpecError, load_python_kernel

    try:
        return load_python_kernel(source, None)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None


def load_user_object(source: str, protocol: type, wrap: Callable[[str, Any], Any]) -> Any:
    """Import ``MODULE:OBJ``: a ``protocol`` instance as it is, a function as ``wrap(source, it)``.

    ``path/lib.so:symbol`` loads ``symbol`` through the C ABI instead
    (:func:`fp8lab.kernels.sources.shared.load_shared`).

    Raises:
        CliError: if the import fails, or OBJ is neither a ``protocol`` object nor callable.
    """
    from fp8lab.kernels.matmul_protocol import MatmulKernel
    from fp8lab.kernels.sources.shared import load_shared
    from fp8lab.kernels.sources.shared_abi import is_shared_source, split_shared_source

    if is_shared_source(source):  # path/lib.so:symbol, through the C ABI
        try:
            path, symbol = split_shared_source(source)
            if protocol is MatmulKernel:
                return load_shared(path, symbol, "matmul")
            return load_shared(path, symbol, "quant")
        except ValueError as exc:
            raise CliError(f"--kernel: {exc}") from None
    from fp8lab.kernels.sources.python import ImportSpecError, load_python_kernel

    try:
        return load_python_kernel(source, protocol, wrap)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None


def load_kernel(source: str, nan_policy: str | None = None) -> QuantKernel:
    """A :class:`QuantKernel` object as it is, or ``FUNC(x, scale) -> uint8 codes`` wrapped.

    ``nan_policy`` (``--nan-policy``) must agree with what the kernel declares.

    Raises:
        CliError: as :func:`load_user_object`, or for a bad or contradicted NaN policy.
    """
    from fp8lab.kernels import FunctionKernel, QuantKernel, resolve_nan_policy

    def wrap(name: str, func: Any) -> FunctionKernel:
        return FunctionKernel(name, func, nan_policy)

    try:
        kernel: QuantKernel = load_user_object(source, QuantKernel, wrap)
        stated = resolve_nan_policy(kernel, nan_policy)
    except ValueError as exc:
        raise CliError(f"--kernel {source}: {exc}") from None
    if getattr(kernel, "nan_policy", None) != stated:
        kernel = FunctionKernel(kernel.name, kernel.quantize, stated)
    return kernel


def load_matmul_kernel(source: str) -> MatmulKernel:
    """A :class:`MatmulKernel` object as it is, or a function wrapped with vllm.cpp's spec.

    An object's ``spec`` picks G3's model; a wrapped
    ``FUNC(a_codes, b_codes, s_in, s_w, out_dtype)`` claims :data:`VLLM_CPP_SPEC`.

    Raises:
        CliError: as :func:`load_user_object`, or for a ``spec`` that is not a MatmulSpec.
    """
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulKernel, MatmulSpec

    kernel: MatmulKernel = load_user_object(source, MatmulKernel, FunctionMatmulKernel)
    claimed = getattr(kernel, "spec", None)
    if claimed is not None and not isinstance(claimed, MatmulSpec):
        raise CliError(f"--kernel: {source!r} has spec {claimed!r}, not a MatmulSpec")
    return kernel


def load_chain_kernel(source: str) -> Any:
    """A fused-chain kernel: any callable ``MODULE:OBJ``.

    Raises:
        CliError: if the import fails or the object is not callable.
    """
    target = load_callable(source)
    if getattr(target, "name", None):
        return target
    return _SpecNamed(source, target)


class _SpecNamed:
    """A chain kernel recorded under its ``MODULE:OBJ``, its ``trace`` passed through."""

    def __init__(self, name: str, func: Any) -> None:
        self.name, self._func = name, func
        if callable(getattr(func, "trace", None)):
            self.trace = func.trace

    def __call__(self, *args: Any) -> Any:
        return self._func(*args)


KERNEL_KINDS = ("quant", "matmul", "scheme", "callable", "encoder")


class _RunEncoder:
    """An exhaustive proof's ``MODULE:FUNC`` encoder, called with the run's keywords it takes."""

    def __init__(self, source: str, func: Any, run: dict[str, Any]) -> None:
        from fp8lab.sweeps.encoders import run_keywords

        self.name, self._func = source, func
        self._keywords = run_keywords(func, str(run["fmt"]), bool(run["saturate"]), str(run["nan"]))
        self.receives = sorted(self._keywords)

    def __call__(self, x: Any) -> Any:
        return self._func(x, **self._keywords)


def gate_kernel_kind(gate: str) -> str:
    """The kind of kernel ``gate`` takes: matmul (G3), callable (GF), scheme (GQ) or quant."""
    from fp8lab.cli.names import GATE_KERNEL_KINDS

    return GATE_KERNEL_KINDS.get(gate, "quant")


def load_foreign_kernel(
    kind: str,
    source: str,
    nan_policy: str | None = None,
    scheme: str | None = None,
    run: dict[str, Any] | None = None,
) -> Any:
    """The user's kernel of ``kind`` (:data:`KERNEL_KINDS`); a scheme kernel for ``scheme``.

    An ``encoder`` is a ``MODULE:FUNC`` from float32 to codes, called with the
    keywords of ``run`` (``fmt``, ``saturate``, ``nan``) that it takes.

    Raises:
        CliError: as the loader of that kind, or for an unknown kind.
    """
    if kind == "matmul":
        return load_matmul_kernel(source)
    if kind == "callable":
        return load_chain_kernel(source)
    if kind == "scheme":
        return load_scheme_kernel(source, scheme)
    if kind == "quant":
        return load_kernel(source, nan_policy)
    if kind == "encoder":
        if not isinstance(run, dict) or not {"fmt", "saturate", "nan"} <= set(run):
            raise CliError(f"--kernel {source}: an encoder needs its run's fmt, saturate and nan")
        return _RunEncoder(source, load_callable(source), run)
    raise CliError(f"unknown kernel kind {kind!r}; one of {', '.join(KERNEL_KINDS)}")
