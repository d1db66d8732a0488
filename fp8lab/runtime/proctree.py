"""Process-tree control: signals that unwind, children that die with us, trees that end whole.

* :func:`install_signal_handlers` makes SIGINT and SIGTERM raise
  :class:`SignalInterrupt` (a ``KeyboardInterrupt``) once, so ``finally`` blocks
  run and the command exits ``128 + signal`` (130, 143).
* :func:`signals_deferred` holds such a signal back for the length of a step
  that must not be cut in two (a worker started but not yet known to its pool,
  a lock taken but not yet in a ``with``), and raises it when the step is done.
* :func:`die_with_parent` asks Linux to SIGKILL this process when its parent
  dies (``PR_SET_PDEATHSIG``); elsewhere it does nothing.
* :func:`kill_tree` ends a tree: every descendant of a root and every process
  that carries a token in its environment (a process whose parent died is no
  longer anyone's descendant, but it keeps its environment). It stops them all
  first (SIGSTOP), so none can start another, then kills them (SIGKILL).
* :func:`yield_tree` lowers the priority of a tree's sessions (Linux's
  autogroups), which a process's own niceness does not reach.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType

import psutil

__all__ = [
    "TOKEN_ENV",
    "SignalInterrupt",
    "adopt_orphans",
    "alive",
    "die_with_parent",
    "how_it_ended",
    "install_signal_handlers",
    "kill_tree",
    "signals_deferred",
    "tree_members",
    "yield_tree",
]

TOKEN_ENV = "FP8LAB_PROCESS_TREE"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_LIBC = (
    ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform == "linux" else None
)


class SignalInterrupt(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``exit_status`` is ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_status = 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


class _Deferral:
    """How deep the main thread is in :func:`signals_deferred` blocks, and the signal held back."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: int | None = None

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.depth += 1

    def __exit__(self, *exc: object) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.depth -= 1
        if self.depth == 0 and self.pending is not None:
            signum, self.pending = self.pending, None
            signal.raise_signal(signum)  # the handler raises it here, now nothing defers it


_DEFERRAL = _Deferral()


def signals_deferred() -> contextlib.AbstractContextManager[None]:
    """A block that a signal of :func:`install_signal_handlers` does not interrupt.

    A SIGINT or SIGTERM that arrives inside the block (in the main thread, where
    Python runs signal handlers) is raised as the outermost block ends, the
    first of them if several came. A raise in the middle of some steps leaves
    a state no cleanup can mend: a pool's worker started but not yet recorded
    by the pool is never ended, and the interpreter's exit waits for it for
    ever; a lock taken in one frame and not yet released by a ``with`` in the
    next is held for ever, and the thread that needs it hangs. Keep such a
    block short and free of waits that may last: the signal waits for it.
    Blocks may nest; in other threads, and under any other handler, a block
    changes nothing.
    """
    return _DEFERRAL


def install_signal_handlers() -> Callable[[], None]:
    """Make SIGINT and SIGTERM raise :class:`SignalInterrupt`; return a function that undoes it.

    The first signal raises (at the end of a :func:`signals_deferred` block
    if it comes inside one); later ones are ignored so that the cleanup it
    starts (ending child trees, filing the run) is not itself interrupted.
    Outside the main thread nothing is installed.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    fired = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if fired.is_set():
            return
        if _DEFERRAL.depth:
            if _DEFERRAL.pending is None:
                _DEFERRAL.pending = signum
            return
        fired.set()
        raise SignalInterrupt(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for s, old in previous.items():
            signal.signal(s, old)
        _DEFERRAL.pending = None  # held back for a handler that is no longer there

    return restore


def die_with_parent(parent: int | None = None) -> None:
    """SIGKILL this process when its parent dies (Linux ``PR_SET_PDEATHSIG``; no-op elsewhere).

    Args:
        parent: the expected parent pid; if the parent is already another
            process (it died before the request took effect), exit at once.
    """
    if _LIBC is None:
        return
    _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def _carries(proc: psutil.Process, token: str) -> bool:
    try:
        return bool(proc.environ().get(TOKEN_ENV) == token)
    except (psutil.Error, OSError):
        return False


def tree_members(root: int | None = None, token: str | None = None) -> list[psutil.Process]:
    """``root``, its descendants, and every process whose environment carries ``token``.

    This process is never a member.
    """
    found: dict[int, psutil.Process] = {}
    if root is not None:
        try:
            top = psutil.Process(root)
            for proc in [top, *top.children(recursive=True)]:
                found[proc.pid] = proc
        except psutil.Error:
            pass
    if token:
        for proc in psutil.process_iter():
            if proc.pid not in found and _carries(proc, token):
                found[proc.pid] = proc
    found.pop(os.getpid(), None)
    return list(found.values())


def yield_tree(root: int, nice: int) -> int:
    """Set the autogroup niceness of every session under ``root`` to at least ``nice``.

    Where Linux groups processes by session (``/proc/PID/autogroup``), the
    cores are shared between sessions first, each by its autogroup's niceness,
    and a process's own niceness counts only within its session; a session
    started under the tree (a notebook's kernel starts one) begins at 0,
    whatever niceness its processes inherit. Raising a niceness needs no
    privilege. Returns the number of sessions changed; where the kernel has no
    autogroups there is nothing to change, and the processes' own niceness is
    what counts.
    """
    changed = 0
    for proc in tree_members(root):
        path = f"/proc/{proc.pid}/autogroup"
        try:
            with open(path, encoding="ascii") as f:
                current = int(f.read().rsplit("nice", 1)[1])
            if current < nice:
                with open(path, "w", encoding="ascii") as f:
                    f.write(str(nice))
                changed += 1
        except (OSError, ValueError, IndexError):
            pass  # gone, no autogroups, or not ours
    return changed


def alive(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    """Those of ``procs`` still running (a zombie has ended: only its exit status is left)."""
    running = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                running.append(proc)
        except psutil.Error:
            pass
    return running


def kill_tree(
    root: int | None = None, token: str | None = None, wait: float = 10.0, also: Iterable[int] = ()
) -> int:
    """Stop, then kill, the whole tree (see :func:`tree_members`); return how many were killed.

    ``also`` names more roots whose trees are ended with it (members found
    earlier, which an exit since may have orphaned).

    The members are collected until no new one appears, each stopped as it is
    found, so a process cannot fork its way out. Waits up to ``wait`` seconds
    for all but ``root`` to be gone (``root``, when it is our child, is for the
    caller to reap).
    """
    members: dict[int, psutil.Process] = {}
    roots = [root, *also]
    for _ in range(100):
        found = [p for r in roots for p in tree_members(r, token if r == root else None)]
        new = [p for p in found if p.pid not in members]
        if not new:
            break
        for proc in new:
            members[proc.pid] = proc
            with contextlib.suppress(psutil.Error):
                proc.suspend()
    for proc in members.values():
        with contextlib.suppress(psutil.Error):
            proc.kill()
    others = [p for p in members.values() if p.pid != root]
    deadline = time.monotonic() + wait
    while alive(others) and time.monotonic() < deadline:
        time.sleep(0.02)
    for proc in others:  # orphans handed to this process (a subreaper) are reaped here
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(proc.pid, os.WNOHANG)
    return len(members)


def adopt_orphans() -> None:
    """Make this process the subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``).

    A process that a descendant orphans (a double fork, ``setsid``) is then
    re-parented to this one instead of to init, so it stays a descendant and
    :func:`kill_tree` finds it by descent, whatever its environment says.
    """
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def how_it_ended(status: int | None) -> str:
    """How a child ended, from its return code: an exit status, a signal, or no answer."""
    if status is None:
        return "stopped answering"
    if status < 0:
        try:
            return f"was killed by signal {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"
