"""Shared CLI pieces: exit codes, JSON output, kernel loading.

Importing this module loads no numpy: the kernel loaders import what they
need when they run, so every subcommand's ``--help`` stays cheap.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fp8lab.evidence.run_dir import write_atomic
from fp8lab.exit_codes import EXIT_CODES
from fp8lab.importing import ImportSpecError, import_attribute

if TYPE_CHECKING:
    from fp8lab.gemm import MatmulKernel
    from fp8lab.kernels import QuantKernel

__all__ = [
    "CliError",
    "json_on_stdout",
    "load_callable",
    "load_kernel",
    "load_matmul_kernel",
    "load_user_object",
    "write_json_output",
]

_JSON_STREAM: ContextVar[TextIO | None] = ContextVar("fp8lab_json_stream", default=None)


class CliError(Exception):
    """A usage error: printed plainly, exit status 2."""

    exit_status = EXIT_CODES["usage"]


@contextlib.contextmanager
def json_on_stdout() -> Iterator[None]:
    """For ``--json -``: everything printed goes to stderr; only the JSON reaches stdout."""
    token = _JSON_STREAM.set(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _JSON_STREAM.reset(token)


def write_json_output(path: str | None, payload: Any) -> None:
    """Write ``payload`` to ``path`` atomically ("-" is stdout); never overwrite.

    Raises:
        CliError: if the path exists or cannot be written.
    """
    if path is None:
        return
    text = json.dumps(payload, indent=2, sort_keys=True) + "\n"
    if path == "-":
        stream = _JSON_STREAM.get() or sys.stdout
        stream.write(text)
        stream.flush()
        return
    try:
        write_atomic(Path(path), text.encode())
    except FileExistsError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write --json {path}: {exc.strerror or exc}") from None


def load_callable(spec: str) -> Any:
    """Import ``MODULE:OBJ`` and require it to be callable.

    Raises:
        CliError: if the import fails or the object is not callable.
    """
    try:
        target = import_attribute(spec)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None
    if not callable(target):
        raise CliError(f"--kernel: {spec!r} is a {type(target).__name__}, not callable")
    return target


def load_user_object(spec: str, protocol: type, wrap: Callable[[str, Any], Any]) -> Any:
    """Import ``MODULE:OBJ``: a ``protocol`` instance as it is, a function as ``wrap(spec, it)``.

    ``path/lib.so:symbol`` loads ``symbol`` through the C ABI instead
    (:func:`fp8lab.kernels.shared.load_shared`).

    Raises:
        CliError: if the import fails, or OBJ is neither a ``protocol`` object nor callable.
    """
    from fp8lab.gemm import MatmulKernel
    from fp8lab.kernels.shared import is_shared_spec, load_shared, split_shared_spec

    if is_shared_spec(spec):  # path/lib.so:symbol, through the C ABI
        try:
            path, symbol = split_shared_spec(spec)
            if protocol is MatmulKernel:
                return load_shared(path, symbol, "matmul")
            return load_shared(path, symbol, "quant")
        except ValueError as exc:
            raise CliError(f"--kernel: {exc}") from None
    try:
        target = import_attribute(spec)
    except ImportSpecError as exc:
        raise CliError(f"--kernel: {exc}") from None
    if isinstance(target, protocol) and not isinstance(target, type):
        return target
    if callable(target):
        return wrap(spec, target)
    raise CliError(
        f"--kernel: {spec!r} is a {type(target).__name__}: neither a {protocol.__name__} "
        "object nor a function"
    )


def load_kernel(spec: str, nan_policy: str | None = None) -> QuantKernel:
    """A :class:`QuantKernel` object as it is, or ``FUNC(x, scale) -> uint8 codes`` wrapped.

    ``nan_policy`` (``--nan-policy``) must agree with what the kernel declares.

    Raises:
        CliError: as :func:`load_user_object`, or for a bad or contradicted NaN policy.
    """
    from fp8lab.formats import FORMATS
    from fp8lab.kernels import FunctionKernel, QuantKernel, resolve_nan_policy

    def wrap(name: str, func: Any) -> FunctionKernel:
        return FunctionKernel(name, func, nan_policy)

    try:
        kernel: QuantKernel = load_user_object(spec, QuantKernel, wrap)
        stated = resolve_nan_policy(kernel, FORMATS["e4m3fn"], nan_policy)
    except ValueError as exc:
        raise CliError(f"--kernel {spec}: {exc}") from None
    if getattr(kernel, "nan_policy", None) != stated:
        kernel = FunctionKernel(kernel.name, kernel.quantize, stated)
    return kernel


def load_matmul_kernel(spec: str) -> MatmulKernel:
    """A :class:`MatmulKernel` object as it is, or a function wrapped with vllm.cpp's spec.

    An object's ``spec`` picks G3's model; a wrapped
    ``FUNC(a_codes, b_codes, s_in, s_w, out_dtype)`` claims :data:`VLLM_CPP_SPEC`.

    Raises:
        CliError: as :func:`load_user_object`, or for a ``spec`` that is not a MatmulSpec.
    """
    from fp8lab.gemm import FunctionMatmulKernel, MatmulKernel, MatmulSpec

    kernel: MatmulKernel = load_user_object(spec, MatmulKernel, FunctionMatmulKernel)
    claimed = getattr(kernel, "spec", None)
    if claimed is not None and not isinstance(claimed, MatmulSpec):
        raise CliError(f"--kernel: {spec!r} has spec {claimed!r}, not a MatmulSpec")
    return kernel
