"""Where a result came from: git state, code hash, packages, machine."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["code_hash", "git_state", "machine", "package_versions", "provenance"]

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def git_state(root: Path = PACKAGE_ROOT.parent) -> dict[str, Any]:
    """The commit sha, its short form and whether the tree has uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"sha": "unknown", "short": "nogit", "dirty": True}
    return {"sha": sha, "short": sha[:7], "dirty": dirty}


def code_hash() -> str:
    """sha256 over the package's Python sources, path and content, sorted."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def package_versions() -> dict[str, str]:
    """Every installed distribution and its version."""
    versions = {
        d.metadata["Name"].lower(): d.version
        for d in importlib.metadata.distributions()
        if d.metadata["Name"]
    }
    return dict(sorted(versions.items()))


def machine() -> dict[str, Any]:
    """Python, OS and CPU facts of this machine."""
    uname = platform.uname()
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "system": uname.system,
        "release": uname.release,
        "machine": uname.machine,
        "node": uname.node,
        "cpus": os.cpu_count(),
    }


def provenance() -> dict[str, Any]:
    """All of the above in one dict."""
    return {
        "git": git_state(),
        "code_hash": code_hash(),
        "packages": package_versions(),
        "machine": machine(),
    }
