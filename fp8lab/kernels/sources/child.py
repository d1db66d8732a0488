"""The child process of an isolated kernel: it imports the user's kernel and only calls it.

``python -m fp8lab.kernels.sources.child REQUEST IN_FD OUT_FD`` loads the
kernel that REQUEST names (its kind, its source, its scheme) through the
loaders of :mod:`fp8lab.kernels.sources.loaders`, answers with what the
kernel declares (which the parent records, and believes only for the
kernel's name, methods and model), then serves calls: each request frame on IN_FD names a method and
its arguments; each answer on OUT_FD carries the raw outputs, a fault, and any
change the call left in the floating-point environment. It computes no
reference, compares nothing and writes no file: the parent
(:class:`fp8lab.kernels.sources.isolated.KernelHost`) does all of that.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import numpy as np

from fp8lab.kernels.sources.library_facts import library_facts
from fp8lab.kernels.sources.loaders import KernelLoadError, load_kernel_of_kind
from fp8lab.kernels.sources.wire import decode_value, encode_value
from fp8lab.runtime.fpenv import env_change, read_fp_env, reset_fp_env
from fp8lab.runtime.frames import FrameError, read_frame, write_frame
from fp8lab.runtime.guard import describe
from fp8lab.runtime.proctree import die_with_parent

__all__ = ["METHODS", "MAX_REQUEST_BYTES", "main", "serve_in_pieces"]

METHODS = ("quantize", "encode", "matmul", "trace", "__call__")
MAX_REQUEST_BYTES = 1 << 31  # the parent's inputs; it sizes its own requests


def _listed(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()


def _declared(kernel: Any) -> dict[str, Any]:
    """What the kernel declares: its name, methods and the attributes the gates read."""
    spec = getattr(kernel, "spec", None)
    found = {
        "name": str(getattr(kernel, "name", None) or type(kernel).__name__),
        "methods": [m for m in METHODS if callable(getattr(kernel, m, None))],
        "nan_policy": getattr(kernel, "nan_policy", None),
        "receives": [str(k) for k in _listed(getattr(kernel, "receives", ()))],
        "spec": (
            dataclasses.asdict(spec)
            if dataclasses.is_dataclass(spec) and not isinstance(spec, type)
            else None
        ),
        "host": library_facts(kernel),  # the library that runs the product, measured here
    }
    if not isinstance(found["nan_policy"], str | None):
        found["nan_policy"] = repr(found["nan_policy"])
    return found


def _arrays_of(kernel: Any) -> Any:
    """The ``arrays`` the kernel declares, on itself or on the function it wraps."""
    for obj in (kernel, getattr(kernel, "func", None), getattr(kernel, "_func", None)):
        found = getattr(obj, "arrays", None)
        if found is not None:
            return found
    return None


def _with_arrays(kernel: Any, request: dict[str, Any]) -> Any:
    """``kernel`` behind :class:`TorchArrays` if ``--arrays`` or the kernel asks for torch/triton.

    Raises:
        KernelLoadError: for an unknown ``arrays``, a missing torch or an absent device.
    """
    from fp8lab.kernels.sources.torch_arrays import ARRAYS, TorchArrays

    stated, declared = request.get("arrays"), _arrays_of(kernel)
    if declared is not None and declared not in ARRAYS:
        raise KernelLoadError(f"--kernel: arrays = {declared!r:.40}; one of {', '.join(ARRAYS)}")
    if stated is not None and declared is not None and stated != declared:
        raise KernelLoadError(f"--arrays {stated} contradicts the kernel's arrays = {declared!r}")
    if declared == "triton" and stated is None:
        raise KernelLoadError(
            "the kernel's arrays = 'triton' needs --arrays triton: Triton's interpreter is "
            "chosen before the kernel's module is imported"
        )
    if (stated or declared or "numpy") == "numpy":
        return kernel
    try:
        return TorchArrays(kernel, str(request.get("device") or "cpu"))
    except ValueError as exc:
        raise KernelLoadError(str(exc)) from None


def _prepare_arrays(request: dict[str, Any]) -> None:
    """Before the kernel's module is imported: Triton's interpreter for ``--arrays triton`` on CPU.

    Raises:
        KernelLoadError: if triton is missing.
    """
    if request.get("arrays") != "triton":
        return
    from fp8lab.kernels.sources.triton_interp import prepare_interpreter

    try:
        prepare_interpreter(str(request.get("device") or "cpu"))
    except ValueError as exc:
        raise KernelLoadError(str(exc)) from None


def _load(request: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    before = read_fp_env()
    try:
        _prepare_arrays(request)
        kernel = load_kernel_of_kind(
            request["kind"], request["source"], request.get("scheme"), request.get("run")
        )
        kernel = _with_arrays(kernel, request)
    except KernelLoadError as exc:
        return None, {"usage": str(exc)}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is the kernel's fault
        return None, {"fault": describe(exc)}
    return kernel, {**_declared(kernel), "env": env_change(before, read_fp_env())}


Called = tuple[Any, str, str]  # (the answer, or None after a fault; the fault; the env change)


def _call(func: Any, args: tuple[Any, ...]) -> Called:
    """One call, from the reset floating-point environment."""
    reset_fp_env()
    before = read_fp_env()
    try:
        out = func(*args)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any kernel failure is the parent's verdict
        return None, describe(exc), env_change(before, read_fp_env())
    return out, "", env_change(before, read_fp_env())


def serve_in_pieces(func: Any, x: np.ndarray, pieces: int) -> Called:
    """``func(x)`` for an elementwise kernel, called on consecutive slices of ``x``, joined.

    Each slice holds at most ``pieces`` elements, so the kernel's own arrays stay
    in cache, and each call starts from the reset environment (the first change
    is the one reported). Where a slice's answer is not an array of the slice's
    shape, or not of the first slice's dtype, ``x`` is passed whole in one call
    and that answer stands, as if no slice had been cut.
    """
    joined: np.ndarray | None = None
    changed = ""
    for lo in range(0, x.size, pieces):
        piece = x[lo : lo + pieces]
        out, fault, env = _call(func, (piece,))
        changed = changed or env
        if fault:
            return None, fault, changed
        same = joined is None or (isinstance(out, np.ndarray) and out.dtype == joined.dtype)
        if not (isinstance(out, np.ndarray) and out.shape == piece.shape and same):
            out, fault, env = _call(func, (x,))
            return out, fault, changed or env
        if joined is None:
            joined = np.empty(x.shape, out.dtype)
        joined[lo : lo + pieces] = out  # copied now: a kernel may hand back a buffer it reuses
    return joined, "", changed


def _serve(
    kernel: Any, header: dict[str, Any], arrays: list[np.ndarray]
) -> tuple[dict[str, Any], list[np.ndarray]]:
    method = str(header.get("call"))
    args = decode_value(header["args"], arrays, readonly=True)
    func = kernel if method == "__call__" else getattr(kernel, method)
    pieces, x = header.get("pieces"), args[0] if len(args) == 1 else None
    if (
        isinstance(pieces, int)
        and isinstance(x, np.ndarray)
        and x.ndim == 1
        and 0 < pieces < x.size
    ):
        out, fault, env = serve_in_pieces(func, x, pieces)
    else:
        out, fault, env = _call(func, tuple(args))
    if fault:
        return {"fault": fault, "env": env}, []
    sent: list[np.ndarray] = []
    return {"result": encode_value(out, sent), "env": env}, sent


def _enter_box(inside: Any) -> str:
    """Finish the kernel's box before it loads (:func:`fp8lab.kernels.sources.box.seal`).

    Returns:
        Why the box could not be sealed, or "" (sealed, or no box).
    """
    from fp8lab.kernels.sources.box import BoxError, seal

    try:
        seal(inside if isinstance(inside, dict) else None)
    except BoxError as exc:
        return str(exc)
    return ""


def main(argv: list[str]) -> None:
    """Child side: load, declare, then serve calls until told to stop or the pipe closes."""
    request, in_fd, out_fd = json.loads(argv[0]), int(argv[1]), int(argv[2])
    unsealed = _enter_box(request.get("box"))
    die_with_parent(1 if request.get("box") else int(request["parent"]))  # a box's PID 1 reaps
    reset_fp_env()
    kernel, hello = _load(request)
    if unsealed:
        hello["box_error"] = unsealed
    write_frame(out_fd, hello)
    while kernel is not None:
        try:
            header, arrays = read_frame(in_fd, None, MAX_REQUEST_BYTES)
        except FrameError:
            break
        if header.get("stop"):
            break
        answer, sent = _serve(kernel, header, arrays)
        try:
            write_frame(out_fd, answer, sent)
        except ValueError as exc:  # an array numpy saves only with pickle
            write_frame(out_fd, {"fault": f"returned an array that cannot be read back ({exc})"})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no atexit hook of the kernel's module can change anything


if __name__ == "__main__":
    main(sys.argv[1:])
