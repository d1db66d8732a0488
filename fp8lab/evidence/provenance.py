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

from fp8lab.runtime.locations import PACKAGE_ROOT, checkout_root

__all__ = [
    "GENERATED",
    "PINS",
    "code_hash",
    "git_state",
    "machine",
    "package_versions",
    "pins_hash",
    "provenance",
]

REPO_ROOT = checkout_root()  # None for an installed package: no git, no pins beside it
PINS = ("constraints.txt", "pyproject.toml")
GENERATED = "results"  # the runs' output: never an input, so never makes a tree dirty


def git_state(root: Path | None = None) -> dict[str, Any]:
    """The commit sha, its short form and whether the sources have uncommitted changes.

    ``dirty`` looks at every tracked file except those under ``results/``, which
    the runs themselves rewrite (the index), so a fresh clone stays clean; and at
    files in the package that git does not track (and does not ignore).
    """
    where = REPO_ROOT if root is None else root
    if where is None:
        return {"sha": "unknown", "short": "nogit", "dirty": True}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=where, capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        changes = git(
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ":/",
            f":(top,exclude){GENERATED}",
        ) + git("status", "--porcelain", "--untracked-files=normal", "--", PACKAGE_ROOT.name)
    except (OSError, subprocess.SubprocessError):
        return {"sha": "unknown", "short": "nogit", "dirty": True}
    return {"sha": sha, "short": sha[:7], "dirty": bool(changes)}


def _digest(root: Path, paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def code_hash() -> str:
    """sha256 over every file of the package, sources and data (``mutants/*.toml``), sorted.

    Byte-code caches are left out: they are derived from the sources.
    """
    files = [
        p
        for p in PACKAGE_ROOT.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    return _digest(PACKAGE_ROOT, sorted(files))


def pins_hash() -> str:
    """sha256 over the pins (``constraints.txt``, ``pyproject.toml``); an absent pin counts."""
    digest = hashlib.sha256()
    for name in PINS:
        digest.update(name.encode() + b"\0")
        path = None if REPO_ROOT is None else REPO_ROOT / name
        if path is not None and path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        else:
            digest.update(b"absent")
    return digest.hexdigest()


def package_versions() -> dict[str, str]:
    """Every installed distribution and its version."""
    versions: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        meta = dist.metadata  # each read parses the distribution's METADATA file again
        if meta["Name"]:
            versions[meta["Name"].lower()] = meta["Version"]
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
        "pins_hash": pins_hash(),
        "packages": package_versions(),
        "machine": machine(),
    }
