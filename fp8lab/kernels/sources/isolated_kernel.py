"""The isolated kernel as a gate sees it: each call crosses to the process that runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fp8lab.kernels.matmul_protocol import MatmulSpec

__all__ = ["IsolatedKernel"]


class _Host(Protocol):
    """What :class:`IsolatedKernel` needs of its host, a :class:`.isolated.KernelHost`."""

    source: str

    @property
    def declared(self) -> dict[str, Any]: ...

    def call(self, method: str, *args: Any) -> Any: ...

    def submit(self, method: str, *args: Any) -> Callable[[], Any]: ...


def _spec(data: Any) -> MatmulSpec | None:
    if not isinstance(data, dict):
        return None
    try:
        trees = tuple(
            (tuple(shape), tuple(tuple(n) for n in nodes), str(kind))
            for shape, nodes, kind in data.get("trees", ())
        )
        return MatmulSpec(**{**data, "trees": trees})
    except (TypeError, ValueError):
        return None


class IsolatedKernel:
    """A kernel whose calls run in a :class:`.isolated.KernelHost`; it has the kernel's methods.

    It takes the kernel's name and methods from what the child declares, and
    nothing that would choose a verdict: it has no ``nan_policy`` and no
    ``spec`` (the parent holds the kernel to what the command line or the
    kernel's source text states). The model the process claims is kept as
    ``claimed_spec``, to be recorded beside the one checked.
    """

    def __init__(self, host: _Host) -> None:
        declared = host.declared
        self._host = host
        self._methods = set(declared.get("methods", ("quantize", "matmul", "__call__")))
        self.name = str(declared.get("name") or host.source)
        facts = declared.get("host")
        if isinstance(facts, dict):  # measured in the kernel's process: recorded, not a verdict
            self.host_facts = facts
        spec = _spec(declared.get("spec"))
        if spec is not None:
            self.claimed_spec = spec

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_") or method not in self.__dict__.get("_methods", ()):
            raise AttributeError(method)
        return lambda *args: self._host.call(method, *args)

    def __call__(self, *args: Any) -> Any:
        """The kernel called as a function (GQ's and GF's convention)."""
        return self._host.call("__call__", *args)

    def submit(self, method: str, *args: Any) -> Callable[[], Any]:
        """Send ``method(*args)`` now; the function returned waits for the answer."""
        return self._host.submit(method, *args)

    def __repr__(self) -> str:
        return f"IsolatedKernel({self.name!r})"
