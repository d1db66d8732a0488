"""The tree killer and the survivor check go red on a planted escapee.

A grandchild that double-forks into a session of its own is no longer
anyone's descendant (the shape of a notebook kernel's pool workers after
papermill is killed): a descendant walk misses it, the environment tag finds it.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from fp8lab.runtime.proctree import TOKEN_ENV, kill_tree, tree_members
from tests.notebooks.trees import survivors

pytestmark = pytest.mark.notebook

ESCAPE = """\
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""


def _adopts_orphans() -> bool:
    """Whether this process is a subreaper (Linux ``PR_GET_CHILD_SUBREAPER``).

    A test before this one on the same worker may have made it one (a kernel
    host without a box adopts orphans); an escapee is then its descendant again.
    """
    flag = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0)
    return bool(flag.value)


def test_an_escaped_process_is_found_by_its_tag_and_killed(tmp_path: Path) -> None:
    token, pidfile = f"test-{os.getpid()}-{tmp_path.name}", tmp_path / "pid"
    env = {**os.environ, TOKEN_ENV: token}
    subprocess.run([sys.executable, "-c", ESCAPE, str(pidfile)], env=env, check=True)
    deadline = time.monotonic() + 60
    while not pidfile.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    escapee = psutil.Process(int(pidfile.read_text()))
    try:
        if not _adopts_orphans():
            assert escapee not in tree_members(root=os.getpid())  # the walk alone misses it
        assert survivors([escapee], grace=0) == [escapee]  # the check sees it alive
        assert escapee in tree_members(token=token)
        assert kill_tree(token=token) == 1
        assert survivors([escapee]) == []
    finally:
        if survivors([escapee], grace=0):
            escapee.kill()
