"""The two system steps that seal an ``unshare`` box, through libc (Linux only).

:func:`read_only_except` runs as root of the box's user namespace, in the
box's own mount namespace: it binds the private folder onto itself (a new,
writable mount) and remounts every other mount read-only, keeping the flags
each already has (``nosuid``, ``nodev``, ``noexec``, the atime flags), which a
user namespace may not drop. :func:`drop_capabilities` then empties the
capability sets and the bounding set and sets no_new_privs, so nothing the
kernel runs can remount, and no program it executes gains a capability.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["BoxError", "drop_capabilities", "read_only_except"]


class BoxError(RuntimeError):
    """The box could not be sealed inside the kernel's process."""


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC = 32, 4096, 16384
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
# statvfs f_flag bits (ST_*) -> the mount flags a remount must keep
_KEPT = {2: _MS_NOSUID, 4: _MS_NODEV, 8: _MS_NOEXEC, 1024: _MS_NOATIME, 2048: _MS_NODIRATIME}
_ST_RELATIME = 4096
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL = 38, 24, 47, 4
_CAP_VERSION_3 = 0x20080522


def _libc() -> ctypes.CDLL:
    try:  # glibc's name: find_library would start ldconfig in the box, for nothing
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _mount_points() -> list[str]:
    """Every mount point of this mount namespace, parents before children."""
    points = []
    with open("/proc/self/mountinfo", "rb") as handle:
        for line in handle:
            field = line.split(b" ")[4]
            text = field.decode("utf-8", "surrogateescape")
            for code in ("\\040", "\\011", "\\012", "\\134"):
                text = text.replace(code, chr(int(code[1:], 8)))
            points.append(text)
    return points


def _call(result: int, what: str) -> None:
    if result != 0:
        raise BoxError(f"{what}: {os.strerror(ctypes.get_errno())}")


def read_only_except(tmp: str) -> None:
    """Bind ``tmp`` writable onto itself, then remount every other mount read-only.

    Raises:
        BoxError: if a mount cannot be made read-only (the box would leak a writable path).
    """
    libc = _libc()
    _call(libc.mount(tmp.encode(), tmp.encode(), None, _MS_BIND, None), f"bind {tmp}")
    for point in _mount_points():
        if point == tmp or not os.path.isdir(point):
            continue
        try:
            flags = os.statvfs(point).f_flag
        except OSError:
            continue  # a mount under a path this namespace cannot reach
        if flags & 1:  # already read-only
            continue
        keep = sum(ms for st, ms in _KEPT.items() if flags & st)
        keep |= _MS_RELATIME if flags & _ST_RELATIME else 0
        how = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | keep
        _call(libc.mount(None, point.encode(), None, how, None), f"remount {point} read-only")


def _cap_last() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63


def drop_capabilities() -> None:
    """Empty this process's capability sets and bounding set; set no_new_privs.

    Raises:
        BoxError: if a step fails.
    """
    libc = _libc()
    _call(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    libc.prctl(_PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(_cap_last() + 1):
        _call(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}, all zero
    _call(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
