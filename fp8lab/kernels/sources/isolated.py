"""A user's kernel in a child process of its own, called through pipes under a watchdog.

:class:`KernelHost` starts ``python -m fp8lab.cli.kernel_child`` in a new session,
which imports the kernel and does nothing but call it. The parent keeps
everything else: populations, references, comparisons, verdicts, records and
files; it never imports the kernel's module. :class:`IsolatedKernel` is the
kernel as the gates see it: its calls cross the pipes, each under
``timeout`` seconds. What can go wrong ends the same way on every path:

- a call past the timeout (asleep, spinning, stopped) ends the child's whole
  process tree with SIGKILL and raises :class:`KernelTimeoutError`;
- a child that exits or dies raises :class:`KernelFaultError` naming its status
  or signal, and every later call raises the same;
- a change the call left in the floating-point environment is collected in
  :attr:`KernelHost.env_changes`; the child resets the environment before
  every call, so no output depends on what an earlier call left.

Closing the host (it is a context manager) ends the child and every process
it started, found by its tree and by a token in their environment.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from types import TracebackType
from typing import Any

from fp8lab.kernels.sources.isolated_kernel import IsolatedKernel
from fp8lab.kernels.sources.wire import decode_value, encode_value
from fp8lab.runtime.frames import (
    FrameError,
    FrameTimeoutError,
    read_frame,
    widen_pipe,
    write_frame,
)
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.runtime.proctree import TOKEN_ENV, how_it_ended, kill_tree

__all__ = [
    "DEFAULT_KERNEL_TIMEOUT",
    "IsolatedKernel",
    "KernelHost",
    "KernelLoadError",
    "KernelTimeoutError",
]

DEFAULT_KERNEL_TIMEOUT = 120.0  # seconds per call: a real kernel's call takes milliseconds
MAX_ANSWER_BYTES = 1 << 28  # one call's outputs; bigger is a fault, never an allocation


class KernelTimeoutError(KernelFaultError):
    """A call did not answer within the timeout; the kernel's process tree was killed."""


class KernelLoadError(ValueError):
    """The kernel cannot be loaded: a module that does not import, a name that is not there."""


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return 2


class KernelHost:
    """The child process that runs one user kernel for one run.

    Args:
        kind: the kernel's kind, which picks its loader: ``quant``, ``matmul``,
            ``scheme``, ``callable`` or ``encoder`` (:data:`fp8lab.cli.kernel_args.KERNEL_KINDS`).
        source: ``MODULE:OBJ`` or ``path/lib.so:symbol``.
        nan_policy: the ``--nan-policy`` stated for a quant kernel.
        scheme: GQ's scheme, for a library.
        timeout: seconds each call (and the load) may take.
        run: an ``encoder``'s run: its format and policies (``fmt``,
            ``saturate``, ``nan``), handed to it as keywords if it takes them.
        arrays: ``torch`` to call the kernel with torch tensors
            (:mod:`fp8lab.kernels.sources.torch_arrays`), ``numpy``, or None for
            what the kernel declares (its ``arrays`` attribute; numpy if none).
        device: the torch device of ``arrays="torch"``: ``cpu`` or ``cuda``.
    """

    def __init__(
        self,
        kind: str,
        source: str,
        *,
        nan_policy: str | None = None,
        scheme: str | None = None,
        timeout: float = DEFAULT_KERNEL_TIMEOUT,
        run: dict[str, Any] | None = None,
        arrays: str | None = None,
        device: str | None = None,
    ) -> None:
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"the kernel timeout must be positive and finite, got {timeout}")
        self.source, self.timeout = source, float(timeout)
        self.env_changes: list[str] = []
        self.calls = 0
        self.dead = ""
        self.timed_out = False
        self._turn = threading.Lock()
        self.token = uuid.uuid4().hex
        request = {
            "kind": kind,
            "source": source,
            "nan_policy": nan_policy,
            "scheme": scheme,
            "run": run,
            "arrays": arrays,
            "device": device,
            "parent": os.getpid(),
        }
        req_r, self._req_w = os.pipe()
        self._ans_r, ans_w = os.pipe()
        for fd in (self._req_w, ans_w):
            widen_pipe(fd)
        path = [os.getcwd() if p == "" else p for p in sys.path]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), TOKEN_ENV: self.token}
        cmd = [sys.executable, "-m", "fp8lab.cli.kernel_child", json.dumps(request)]
        try:
            self._proc = subprocess.Popen(
                [*cmd, str(req_r), str(ans_w)],
                pass_fds=(req_r, ans_w),
                stdin=subprocess.DEVNULL,
                stdout=_stderr_fd(),  # the kernel's prints: stdout may carry --json -
                env=env,
                start_new_session=True,
            )
        finally:
            os.close(req_r)
            os.close(ans_w)
        self._declared: dict[str, Any] | None = None

    @property
    def declared(self) -> dict[str, Any]:
        """What the kernel declares; the first read waits for the child to load it.

        The child starts at construction, so its imports overlap the parent's.

        Raises:
            KernelLoadError: if the kernel cannot be loaded (a usage error).
        """
        if self._declared is None:
            try:
                self._declared = self._hello()
            except BaseException:
                self.close()
                raise
        return self._declared

    def _hello(self) -> dict[str, Any]:
        try:
            hello, _ = read_frame(self._ans_r, time.monotonic() + self.timeout, 1 << 20)
        except FrameError as exc:
            self._end(exc, "while loading")
            return {}
        if "usage" in hello:
            raise KernelLoadError(str(hello["usage"]))
        if "fault" in hello:
            self.dead = f"kernel raised {hello['fault']} while loading"
            return {}
        if hello.get("env"):
            self.env_changes.append(f"{hello['env']} at load")
        return hello

    def _dead_error(self) -> KernelFaultError:
        kind = KernelTimeoutError if self.timed_out else KernelFaultError
        return kind(self.dead, ended=True)

    def _end(self, exc: FrameError, where: str) -> None:
        """File why the child is gone and make sure it is."""
        if isinstance(exc, FrameTimeoutError):
            self.timed_out = True
            self.dead = f"kernel timed out after {self.timeout:g} s {where}"
        else:
            try:
                status = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            self.dead = f"kernel process {how_it_ended(status)} {where}"
        self._kill()

    def call(self, method: str, *args: Any) -> Any:
        """``method(*args)`` in the child; its raw result. Threads take turns: one call at a time.

        Raises:
            KernelTimeoutError: if no answer came within the timeout.
            KernelFaultError: if the kernel raised, or its process has ended.
        """
        return self.submit(method, *args)()

    def submit(self, method: str, *args: Any) -> Callable[[], Any]:
        """Send ``method(*args)`` now; the function returned waits for the answer (call it once).

        The parent can compute its expectation while the child runs the kernel;
        the watchdog counts from now. Until the answer is read, other calls wait.

        Raises:
            KernelFaultError: if the kernel's process has ended (also from the answer,
                as :meth:`call` raises).
        """
        self._turn.acquire()
        try:
            deadline = self._send(method, args)
        except BaseException:
            self._turn.release()
            raise
        pending = [True]

        def answer() -> Any:
            if not pending:
                raise RuntimeError("this call's answer was already read")
            pending.clear()
            try:
                return self._receive(method, deadline)
            finally:
                self._turn.release()

        return answer

    def _send(self, method: str, args: tuple[Any, ...]) -> float:
        if not self.dead:
            self.declared  # noqa: B018 - the load comes first
        if self.dead:
            raise self._dead_error()
        self.calls += 1
        sent: list[Any] = []
        header = {"call": method, "args": encode_value(args, sent)}
        deadline = time.monotonic() + self.timeout
        try:
            write_frame(self._req_w, header, sent)
        except (FrameError, OSError) as exc:
            failed = exc if isinstance(exc, FrameError) else FrameError(str(exc))
            self._end(failed, f"in call {self.calls} ({method})")
            raise self._dead_error() from None
        return deadline

    def _receive(self, method: str, deadline: float) -> Any:
        try:
            answer, arrays = read_frame(self._ans_r, deadline, MAX_ANSWER_BYTES)
        except FrameError as exc:
            self._end(exc, f"in call {self.calls} ({method})")
            raise self._dead_error() from None
        if answer.get("env") and answer["env"] not in self.env_changes:
            self.env_changes.append(str(answer["env"]))
        if "fault" in answer:
            raise KernelFaultError(str(answer["fault"]))
        try:
            return decode_value(answer["result"], arrays)
        except (KeyError, ValueError, IndexError) as exc:
            raise KernelFaultError(f"the kernel's answer is malformed ({exc})") from None

    def _kill(self) -> None:
        kill_tree(self._proc.pid, self.token, wait=5.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)

    def close(self) -> None:
        """End the child and everything it started; idempotent."""
        if self._req_w < 0:
            return
        if self._proc.poll() is None and not self.dead:
            with contextlib.suppress(OSError):
                write_frame(self._req_w, {"stop": True})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=2)
        self._kill()  # the sweep also ends what the kernel left behind
        for fd in (self._req_w, self._ans_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._req_w = self._ans_r = -1

    def __enter__(self) -> KernelHost:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def kernel(self) -> IsolatedKernel:
        """The kernel as a gate sees it."""
        return IsolatedKernel(self)
