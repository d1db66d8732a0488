"""The box a user's kernel runs in: its own Linux namespaces, through bubblewrap or unshare.

:func:`open_box` gives the command prefix that starts the kernel's process in
new user, PID, mount, IPC, UTS and network namespaces, through Debian's
``bwrap`` or util-linux ``unshare``, whichever the machine has (``bwrap``
first). Inside the box the file system is read-only but for a private
temporary folder (``TMPDIR``); ``/proc`` is the box's own, so no process of
fp8lab's is visible or can be signalled; the network is a down loopback. The
box's PID 1 is a reaper whose only child is the kernel's process (PID 2, so
its own signals act on it as on any process): when the kernel's process ends,
PID 1 exits with ``128 + signal`` or the exit status, and every other process
in the box is killed with the namespace. The box dies with fp8lab. With
``unshare``, :func:`seal` sets the read-only view, drops the capabilities
and forks the reaper in the kernel's process before the kernel is imported
(``bwrap`` does all three itself).

The private folder is removed when the host closes the box, or by the next
box opened on the machine once its owner's process is gone.

Under ``make coverage`` (coverage.py measuring fp8lab's process), the box's
processes write their line data into the private folder, the only place they
can write, and closing the box moves those files beside fp8lab's own: they
count towards the coverage figure and nothing else.

Where neither tool can make a user namespace, the kernel runs as a plain
child process: :func:`isolation_level` says ``process`` (else
``namespace``), and every record of a user kernel carries it.
``$FP8LAB_BOX`` picks the tool (``bwrap``, ``unshare``) or turns the box off
(``none``); unset, the first that works is used.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from fp8lab.kernels.sources.box_seal import BoxError, drop_capabilities, read_only_except

__all__ = [
    "BOX_ENV",
    "Box",
    "BoxError",
    "box_tool",
    "exit_status",
    "isolation_level",
    "kernel_pid",
    "open_box",
    "seal",
]

BOX_ENV = "FP8LAB_BOX"
_COVERAGE_CONFIG = "COVERAGE_PROCESS_CONFIG"  # set by coverage.py's patch = subprocess
_COVERAGE_DATA = ".coverage"  # the box's line data: <tmp>/.coverage.<host>.<pid>.<random>
_PREFIX = "fp8lab-box-"  # <tmp>/fp8lab-box-<owner pid>-<random>: a box's private folder
TOOLS = ("bwrap", "unshare")
_NAMESPACES = ["--user", "--map-root-user", "--pid", "--fork", "--mount", "--ipc", "--net"]
_UNSHARE = ["unshare", *_NAMESPACES, "--uts", "--mount-proc", "--kill-child=SIGKILL"]
_BWRAP = [
    "bwrap",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-net",
    "--unshare-uts",
    "--disable-userns",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
]


def _prefix(tool: str, tmp: str, cwd: str, devices: bool) -> list[str]:
    if tool == "bwrap":
        dev = ["--dev-bind", "/dev", "/dev"] if devices else ["--dev", "/dev"]
        return [*_BWRAP, *dev, "--bind", tmp, tmp, "--chdir", cwd, "--"]
    pdeath = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
    return [*pdeath, *_UNSHARE, "--"]


@functools.cache
def _works(tool: str) -> bool:
    """Whether ``tool`` can make the box here: a trial run of ``true`` inside it."""
    if shutil.which(tool) is None or not sys.platform.startswith("linux"):
        return False
    with tempfile.TemporaryDirectory(prefix="fp8lab-box-probe-") as tmp:
        argv = [*_prefix(tool, tmp, tmp, False), "true"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def box_tool() -> str | None:
    """The tool that makes the box here (``$FP8LAB_BOX``, else the first that works), or None."""
    wanted = os.environ.get(BOX_ENV, "").strip().lower()
    if wanted == "none":
        return None
    for tool in (wanted,) if wanted in TOOLS else TOOLS:
        if _works(tool):
            return tool
    return None


def isolation_level() -> str:
    """``namespace`` where a user kernel runs in a box here, else ``process``."""
    return "namespace" if box_tool() else "process"


@dataclass(frozen=True)
class Box:
    """One kernel process's box: the tool, its private temporary folder, the devices it sees."""

    tool: str
    tmp: str
    devices: bool = False

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the box."""
        return [*_prefix(self.tool, self.tmp, os.getcwd(), self.devices), *argv]

    def env(self) -> dict[str, str]:
        """What the box's environment adds: every temporary and cache folder is the private one."""
        caches = ("TMPDIR", "XDG_CACHE_HOME", "TRITON_CACHE_DIR")
        env = {**{name: self.tmp for name in caches}, "NUMBA_CACHE_DIR": _numba_cache(self.tmp)}
        if os.environ.get(_COVERAGE_CONFIG):
            env[_COVERAGE_CONFIG] = _coverage_config_writing_to(self.tmp)
        return env

    def inside(self) -> dict[str, Any]:
        """What :func:`seal` needs in the kernel's process."""
        return {"tool": self.tool, "tmp": self.tmp}

    def close(self) -> None:
        """Remove the private folder and what the kernel left in it."""
        _keep_coverage_data(self.tmp)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _coverage_config_writing_to(tmp: str) -> str:
    """coverage.py's configuration for the box's processes: this one, its data file in ``tmp``."""
    from coverage.config import CoverageConfig

    config = CoverageConfig.deserialize(os.environ[_COVERAGE_CONFIG])
    config.data_file = os.path.join(tmp, _COVERAGE_DATA)
    return config.serialize()


def _keep_coverage_data(tmp: str) -> None:
    """Under coverage.py, move the line data the box's processes wrote beside this process's own."""
    coverage = sys.modules.get("coverage")
    current = coverage.Coverage.current() if coverage is not None else None
    if current is None:
        return
    target = os.path.abspath(current.config.data_file)  # <folder>/<name>: combined from <name>.*
    with contextlib.suppress(OSError):
        for entry in os.scandir(tmp):
            if entry.name.startswith(_COVERAGE_DATA + ".") and entry.is_file(follow_symlinks=False):
                shutil.move(entry.path, target + entry.name.removeprefix(_COVERAGE_DATA))


def _numba_cache(tmp: str) -> str:
    """A numba cache in ``tmp`` seeded with copies of fp8lab's compiled functions.

    Numba writes its cache beside the sources, which the box shows read-only;
    given ``NUMBA_CACHE_DIR`` it reads and writes ``<dir>/<folder>_<sha1 of the
    folder>`` instead. The copies keep a kernel that calls fp8lab's jitted code
    from compiling it afresh in every box, and nothing it writes reaches fp8lab.
    """
    import hashlib

    cache = os.path.join(tmp, "numba")
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for folder, _, files in os.walk(package):
        if os.path.basename(folder) != "__pycache__":
            continue
        source = os.path.dirname(folder)
        where = f"{os.path.basename(source)}_{hashlib.sha1(source.encode()).hexdigest()}"
        for name in (f for f in files if f.endswith((".nbi", ".nbc"))):
            os.makedirs(os.path.join(cache, where), exist_ok=True)
            with contextlib.suppress(OSError):
                shutil.copyfile(os.path.join(folder, name), os.path.join(cache, where, name))
    return cache


def open_box(*, devices: bool = False) -> Box | None:
    """A new box (its private folder made), or None where none can be made here.

    Args:
        devices: show the host's ``/dev`` (a CUDA kernel needs its GPU's device files).
    """
    tool = box_tool()
    if tool is None:
        return None
    _remove_orphaned_folders()
    folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
    return Box(tool, os.path.realpath(folder), devices)


def _remove_orphaned_folders() -> None:
    """Remove the private folders of boxes whose fp8lab process is gone.

    A process killed before it closed its box (a pool worker ended with its
    pool) leaves the folder; its name holds the owner's pid.
    """
    import psutil

    with contextlib.suppress(OSError):
        for entry in os.scandir(tempfile.gettempdir()):
            owner = entry.name.removeprefix(_PREFIX).split("-")[0]
            gone = owner.isdigit() and not psutil.pid_exists(int(owner))
            if entry.name.startswith(_PREFIX) and gone:
                shutil.rmtree(entry.path, ignore_errors=True)


def seal(inside: dict[str, Any] | None) -> None:
    """In the kernel's process, before the kernel loads: finish an ``unshare`` box.

    Binds the private folder writable, remounts every other mount read-only,
    and drops every capability (the bounding set too, with no_new_privs), so
    the kernel cannot remount anything. A ``bwrap`` box is already sealed.

    Raises:
        BoxError: naming the step that failed.
    """
    if not inside or inside.get("tool") != "unshare":
        return
    tmp = str(inside["tmp"])
    read_only_except(tmp)
    drop_capabilities()
    with contextlib.suppress(OSError):
        os.chdir(os.getcwd())  # the working folder, as the remounts left it
    _reap_as_pid_1()


def _reap_as_pid_1() -> None:
    """As the box's PID 1: fork the kernel's process, reap every child, exit when it ends.

    Returns only in the child (PID 2), which goes on to load the kernel.
    """
    if os.getpid() != 1:
        return
    kernel = os.fork()
    if kernel == 0:
        return
    for fd in range(3, 1024):  # the pipes are the kernel's alone
        with contextlib.suppress(OSError):
            os.close(fd)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == kernel:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def _ns_pids(pid: int) -> list[int]:
    """``pid``'s number in each PID namespace it is in, outermost first (``NSpid``)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return [int(n) for n in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def kernel_pid(launcher: int) -> int | None:
    """The kernel's process of the box that ``launcher`` (bwrap or unshare) started, or None.

    It is the first child of the box's PID 1 (forked before the kernel loaded;
    any later child of PID 1 is an orphan the kernel left), found by the
    ``NSpid`` of the processes under ``launcher``, never by asking the box.
    """
    import psutil

    depth = len(_ns_pids(os.getpid())) + 1
    try:
        below = psutil.Process(launcher).children(recursive=True)
    except psutil.Error:
        return None
    inits = [p.pid for p in below if _ns_pids(p.pid)[-1:] == [1] and len(_ns_pids(p.pid)) == depth]
    found = []
    for proc in below:
        with contextlib.suppress(psutil.Error):
            if len(inits) == 1 and proc.ppid() == inits[0]:
                found.append((proc.create_time(), _ns_pids(proc.pid)[-1:], proc.pid))
    return min(found)[2] if found else None


def exit_status(returncode: int | None) -> int | None:
    """The kernel's own end from its box's: ``128 + N`` (N < 65) is signal N, as a ``-N``."""
    if returncode is not None and 128 < returncode < 128 + 65:
        return 128 - returncode
    return returncode
