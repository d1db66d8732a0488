"""Call a kernel under test so that nothing it does can change the verdict.

Every harness (gates, exhaustive proofs, detectors, mutation) calls foreign
code through :func:`call_kernel`:

- each array argument is replaced by a private, read-only copy, so a kernel
  that writes into its input gets a clear ``ValueError`` from numpy, and even
  one that re-enables writing on its copy touches nothing the harness reads;
- any ``BaseException`` the kernel raises (``SystemExit`` included) becomes a
  :class:`KernelFaultError` with a one-line reason, which the harness records as a
  FAIL of that case. Only a real ``KeyboardInterrupt`` passes through.

A harness that hands one array to several of its own built-in encoders may
seal it once (:func:`sealed_copy`: a read-only view of a private copy, which
numpy refuses to make writable again) and call each through
:func:`call_sealed`, which guards the call without copying again.

Harnesses compute every expectation before they call the kernel, and never
read the arrays they handed to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["KernelFaultError", "call_kernel", "call_sealed", "private_readonly", "sealed_copy"]

T = TypeVar("T")


class KernelFaultError(Exception):
    """The kernel under test raised, exited or misbehaved; ``reason`` says how.

    ``ended`` is true when the kernel's process is gone (it exited, crashed or
    timed out): ``reason`` then says how it ended, not what it raised.
    """

    def __init__(self, reason: str, *, ended: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ended = ended

    def __reduce__(self) -> tuple[Any, ...]:  # ``ended`` survives a worker's pickle
        return (_rebuild_fault, (type(self), self.reason, self.ended))

    def line(self, who: str) -> str:
        """One line naming ``who`` (e.g. ``kernel 'mod:q'``) and what happened."""
        return f"{who}: {self.reason}" if self.ended else f"{who} raised {self.reason}"


def _rebuild_fault(kind: type[KernelFaultError], reason: str, ended: bool) -> KernelFaultError:
    return kind(reason, ended=ended)


def private_readonly(value: Any) -> Any:
    """A read-only copy of ``value`` if it is an ndarray, else ``value`` itself."""
    if not isinstance(value, np.ndarray):
        return value
    copy = np.array(value, copy=True, order="K")
    copy.setflags(write=False)
    return copy


def sealed_copy(value: np.ndarray) -> np.ndarray:
    """A read-only view of a private copy of ``value``; its writing cannot be re-enabled."""
    copy: np.ndarray = private_readonly(value)
    return copy.view()


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def call_kernel(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` with private read-only array arguments.

    Raises:
        KernelFaultError: for any exception or exit the call raised (an
            isolated kernel's own :class:`KernelFaultError` as it is), except a
            ``KeyboardInterrupt``, which propagates.
    """
    safe_args = [private_readonly(a) for a in args]
    safe_kwargs = {k: private_readonly(v) for k, v in kwargs.items()}
    return call_sealed(func, *safe_args, **safe_kwargs)


def call_sealed(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` as :func:`call_kernel`, its arrays passed as they are.

    For arrays the caller sealed (:func:`sealed_copy`) and reads no more.

    Raises:
        KernelFaultError: as :func:`call_kernel`.
    """
    try:
        return func(*args, **kwargs)
    except (KeyboardInterrupt, KernelFaultError):  # an isolated kernel's fault is already one
        raise
    except BaseException as exc:  # noqa: BLE001 - any kernel failure is a verdict
        raise KernelFaultError(describe(exc)) from None
