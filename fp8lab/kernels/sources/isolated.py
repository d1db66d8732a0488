"""A user's kernel in a child process of its own, called through pipes under a watchdog.

:class:`KernelHost` starts ``python -m fp8lab.kernels.sources.child`` in a new session,
inside a box of its own where the machine can make one
(:mod:`fp8lab.kernels.sources.box`: ``isolation`` says ``namespace``, else
``process``). The child imports the kernel and only calls it; the parent keeps
populations, references, comparisons, verdicts, records and files, and never
imports the kernel's module nor believes what the child says of itself.
:class:`IsolatedKernel` is the kernel as the gates see it: each call crosses the
pipes under ``timeout`` seconds. What can go wrong ends the same way on every path:

- a call past the timeout (asleep, spinning, stopped) ends the child's whole
  process tree with SIGKILL and raises :class:`KernelTimeoutError`;
- a child that exits or dies raises :class:`KernelFaultError` naming its status
  or signal, an answer over the cap names the cap, and every later call raises the same;
- the floating-point environment each call left is read from outside the child
  (:mod:`fp8lab.kernels.sources.watch`) into :attr:`KernelHost.env_changes`.

Closing the host (it is a context manager) ends the child and every process
it started: the box's namespace, else its tree (this process adopts orphans)
and a token in their environment.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from types import TracebackType
from typing import Any

from fp8lab.kernels.sources.box import exit_status, open_box
from fp8lab.kernels.sources.isolated_kernel import IsolatedKernel
from fp8lab.kernels.sources.loaders import KernelLoadError
from fp8lab.kernels.sources.watch import KernelWatch
from fp8lab.kernels.sources.watchdog import DEFAULT_KERNEL_TIMEOUT, kernel_timeout
from fp8lab.kernels.sources.wire import decode_value, encode_value, plain_header
from fp8lab.runtime.frames import (
    FrameClosedError,
    FrameError,
    FrameTimeoutError,
    FrameTooLargeError,
    read_frame,
    widen_pipe,
    write_frame,
)
from fp8lab.runtime.guard import KernelFaultError
from fp8lab.runtime.proctree import (
    TOKEN_ENV,
    adopt_orphans,
    how_it_ended,
    kill_tree,
    tree_members,
)

__all__ = [
    "DEFAULT_KERNEL_TIMEOUT",
    "IsolatedKernel",
    "KernelHost",
    "KernelLoadError",
    "KernelTimeoutError",
]

MAX_ANSWER_BYTES = 1 << 28  # one call's outputs; bigger is a fault, never an allocation


class KernelTimeoutError(KernelFaultError):
    """A call did not answer within the timeout; the kernel's process tree was killed."""


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return 2


class KernelHost:
    """The child process that runs one user kernel for one run.

    Args:
        kind: the kernel's kind, which picks its loader: a gate's kernel kind
            (:data:`fp8lab.specs.gates.KERNEL_KINDS`), ``callable`` or ``encoder``
            (:data:`fp8lab.kernels.sources.loaders.LOADER_KINDS`).
        source: ``MODULE:OBJ`` or ``path/lib.so:symbol``.
        scheme: GQ's scheme, for a library.
        timeout: seconds each call (and the load) may take
            (:func:`fp8lab.kernels.sources.watchdog.kernel_timeout`).
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
        scheme: str | None = None,
        timeout: float = DEFAULT_KERNEL_TIMEOUT,
        run: dict[str, Any] | None = None,
        arrays: str | None = None,
        device: str | None = None,
    ) -> None:
        self.source, self.timeout = source, kernel_timeout(timeout)
        self.env_changes: list[str] = []
        self.calls = 0
        self.dead = ""
        self.timed_out = False
        self._turn = threading.Lock()
        self.token = uuid.uuid4().hex
        request = {
            "kind": kind,
            "source": source,
            "scheme": scheme,
            "run": run,
            "arrays": arrays,
            "device": device,
            "parent": os.getpid(),
        }
        self.box = open_box(devices=device == "cuda")
        self.box_error = ""
        request["box"] = self.box.inside() if self.box else None
        req_r, self._req_w = os.pipe()
        self._ans_r, ans_w = os.pipe()
        for fd in (self._req_w, ans_w):
            widen_pipe(fd)
        path = [os.getcwd() if p == "" else p for p in sys.path]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), TOKEN_ENV: self.token}
        cmd = [sys.executable, "-m", "fp8lab.kernels.sources.child", json.dumps(request)]
        cmd += [str(req_r), str(ans_w)]
        if self.box:
            env.update(self.box.env())
            cmd = self.box.command(cmd)
        else:
            adopt_orphans()  # what the kernel orphans stays our descendant, for the sweep
        try:
            self._proc = subprocess.Popen(
                cmd,
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
        self._watch = KernelWatch(self._proc, self.box is not None)

    @property
    def fp_env_read(self) -> str:
        """How the environment after each call was read: ``ptrace`` or ``self-reported``."""
        return self._watch.fp_env_read

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
            hello = dict(plain_header(hello))
        except (FrameError, ValueError) as exc:
            exc = exc if isinstance(exc, FrameError) else FrameError(str(exc))
            self._end(exc, "while loading")
            return {}
        if "usage" in hello:
            raise KernelLoadError(str(hello["usage"]))
        if "fault" in hello:
            self.dead = f"kernel raised {hello['fault']} while loading"
            return {}
        changed = self._watch.env_after(hello.get("env"))
        if changed:
            self.env_changes.append(f"{changed} at load")
        self.box_error = str(hello.get("box_error") or "")
        return hello

    @property
    def isolation(self) -> str:
        """``namespace`` when the kernel runs in a sealed box, else ``process``."""
        return "namespace" if self.box and not self.box_error else "process"

    def _dead_error(self) -> KernelFaultError:
        kind = KernelTimeoutError if self.timed_out else KernelFaultError
        return kind(self.dead, ended=True)

    def _end(self, exc: FrameError, where: str) -> None:
        """File why the child is gone and make sure it is."""
        if isinstance(exc, FrameTimeoutError):
            self.timed_out = True
            self.dead = f"kernel timed out after {self.timeout:g} s {where}"
        elif isinstance(exc, FrameTooLargeError):
            cap = MAX_ANSWER_BYTES >> 20
            self.dead = f"kernel's answer is over the {cap} MiB cap {where} ({exc})"
        elif not isinstance(exc, FrameClosedError):
            self.dead = f"kernel sent a malformed answer {where} ({exc})"
        else:
            try:
                status = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            status = exit_status(status) if self.box else status
            self.dead = f"kernel process {how_it_ended(status)} {where}"
        self._kill()

    def call(self, method: str, *args: Any, pieces: int = 0) -> Any:
        """``method(*args)`` in the child; its raw result. Threads take turns: one call at a time.

        ``pieces``: for an elementwise kernel given one 1-D array, the child calls it on
        consecutive slices of at most this many elements and joins the answers
        (:func:`fp8lab.kernels.sources.child.serve_in_pieces`); 0 calls it once.

        Raises:
            KernelTimeoutError: if no answer came within the timeout.
            KernelFaultError: if the kernel raised, or its process has ended.
        """
        return self.submit(method, *args, pieces=pieces)()

    def submit(self, method: str, *args: Any, pieces: int = 0) -> Callable[[], Any]:
        """Send ``method(*args)`` now; the function returned waits for the answer (call it once).

        The parent can compute its expectation while the child runs the kernel;
        the watchdog counts from now. Until the answer is read, other calls wait.

        Raises:
            KernelFaultError: if the kernel's process has ended (also from the answer,
                as :meth:`call` raises).
        """
        self._turn.acquire()
        try:
            deadline = self._send(method, args, pieces)
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

    def _send(self, method: str, args: tuple[Any, ...], pieces: int = 0) -> float:
        if not self.dead:
            self.declared  # noqa: B018 - the load comes first
        if self.dead:
            raise self._dead_error()
        self.calls += 1
        sent: list[Any] = []
        header = {"call": method, "args": encode_value(args, sent)}
        if pieces:
            header["pieces"] = pieces
        deadline = time.monotonic() + self.timeout
        try:
            write_frame(self._req_w, header, sent)
        except (FrameError, OSError) as exc:
            failed = exc if isinstance(exc, FrameError) else FrameClosedError(str(exc))
            self._end(failed, f"in call {self.calls} ({method})")
            raise self._dead_error() from None
        return deadline

    def _receive(self, method: str, deadline: float) -> Any:
        try:
            answer, arrays = read_frame(self._ans_r, deadline, MAX_ANSWER_BYTES)
            answer = dict(plain_header(answer))
        except (FrameError, ValueError) as exc:
            exc = exc if isinstance(exc, FrameError) else FrameError(str(exc))
            self._end(exc, f"in call {self.calls} ({method})")
            raise self._dead_error() from None
        changed = self._watch.env_after(answer.get("env"))
        if changed and changed not in self.env_changes:
            self.env_changes.append(changed)
        if "fault" in answer:
            raise KernelFaultError(str(answer["fault"]))
        try:
            return decode_value(answer["result"], arrays)
        except (KeyError, ValueError, IndexError, TypeError, OverflowError) as exc:
            # the protocol is broken: the process is ended now, not trusted with another call
            self._end(FrameError(str(exc)), f"in call {self.calls} ({method})")
            raise self._dead_error() from None

    def _kill(self, also: tuple[int, ...] = ()) -> None:
        kill_tree(self._proc.pid, self.token, wait=5.0, also=also)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)

    def close(self) -> None:
        """End the child and everything it started; idempotent."""
        if self._req_w < 0:
            return
        # what the child started, found while it is their parent (its exit orphans them)
        helpers = tuple(p.pid for p in tree_members(self._proc.pid))
        if self._proc.poll() is None and not self.dead:
            with contextlib.suppress(OSError):
                write_frame(self._req_w, {"stop": True})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=2)
        self._kill(helpers)  # the sweep also ends what the kernel left behind
        for fd in (self._req_w, self._ans_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._req_w = self._ans_r = -1
        if self.box:
            self.box.close()

    def __enter__(self) -> KernelHost:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def kernel(self) -> IsolatedKernel:
        """The kernel as a gate sees it."""
        return IsolatedKernel(self)
