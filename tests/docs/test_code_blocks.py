"""The code blocks of the README and the manual run as a reader would run them.

A fenced ``python`` block runs unless the line before it is ``<!-- no-run: WHY -->``;
the blocks of one page run in order in one fresh interpreter (as a reader
pastes them one after another), and every ``test_*`` function they define is
called. A shell block (no language, or ``sh``) runs when the line before it is
``<!-- run -->``: each command line in turn at the repository root (``cd``
moves), with ``.venv/bin`` first on ``PATH``; a trailing ``# ... exit N`` is the
status the command must end with (0 otherwise). ``<!-- run: requires=MOD -->``
skips the block where the module ``MOD`` cannot be imported, and
``cwd=DIR`` runs a block from ``DIR`` (on ``sys.path`` too).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^ *```([a-z]*)\n(.*?)^ *```$", re.M | re.S)  # in a list item: indented
MARK = re.compile(r"<!-- (run|no-run)(?::\s*(.*?))? -->\n *$")
EXIT = re.compile(r"#.*\bexit (\d+)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    mark: str | None  # "run", "no-run" or None
    options: dict[str, str]
    why: str  # the text after the mark's colon


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        mark = MARK.search(before[-200:])
        options: dict[str, str] = {}
        if mark and mark.group(1) == "run" and mark.group(2):
            options = dict(kv.split("=", 1) for kv in mark.group(2).split())
        found.append(
            Block(
                page,
                before.count("\n") + 1,
                m.group(1),
                textwrap.dedent(m.group(2)),
                mark.group(1) if mark else None,
                options,
                (mark.group(2) or "") if mark else "",
            )
        )
    return found


def _skip_missing(block: Block) -> None:
    need = block.options.get("requires")
    if need and importlib.util.find_spec(need) is None:
        pytest.skip(f"{block.page.name}:{block.line} needs {need}")


def _env() -> dict[str, str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)}


PY_PAGES = [p for p in PAGES if any(b.lang == "python" for b in blocks(p))]
SHELL = [b for p in PAGES for b in blocks(p) if b.lang in ("", "sh") and b.mark == "run"]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``cwd`` as a reader runs it: ``.venv/bin`` first on PATH, output kept."""
    return subprocess.run(
        argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600, check=False
    )


def run_python_page(page: Path, tmp_path: Path) -> None:
    """Run ``page``'s python blocks; AssertionError names the first that fails."""
    for block in blocks(page):
        if block.lang != "python" or block.mark == "no-run":
            continue
        _skip_missing(block)
        cwd = ROOT / block.options["cwd"] if "cwd" in block.options else tmp_path
        script = (
            f"import sys; sys.path.insert(0, {str(cwd)!r})\n{block.code}\n"
            "for _name, _f in list(globals().items()):\n"
            "    if _name.startswith('test_') and callable(_f):\n"
            "        _f()\n"
        )
        proc = _run([sys.executable, "-c", script], cwd)
        assert proc.returncode == 0, f"{page.name}:{block.line}\n{proc.stderr[-3000:]}"


def run_shell_block(block: Block) -> None:
    """Run a shell block's commands; AssertionError names the first with the wrong status."""
    cwd = ROOT / block.options.get("cwd", ".")
    for line in block.code.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command:
            continue
        if command.startswith("cd "):
            cwd = (cwd / command[3:].strip()).resolve()
            continue
        want = int(m.group(1)) if (m := EXIT.search(line)) else 0
        proc = _run(shlex.split(command), cwd)
        assert proc.returncode == want, f"{block.page.name}:{block.line} {command}\n{proc.stderr}"


@pytest.mark.parametrize("page", PY_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    run_python_page(page, tmp_path)


@pytest.mark.parametrize("block", SHELL, ids=lambda b: f"{b.page.name}:{b.line}")
def test_shell_blocks_run(block: Block) -> None:
    _skip_missing(block)
    run_shell_block(block)


def test_a_failing_block_goes_red(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n```python\ndef test_x():\n    assert x == 2\n```\n\n"
        "<!-- run -->\n```\ntrue  # exit 0\nfalse  # passes only if it exits 0\n```\n"
    )
    with pytest.raises(AssertionError, match=r"page\.md:5"):
        run_python_page(page, tmp_path)
    (shell,) = [b for b in blocks(page) if b.mark == "run"]
    with pytest.raises(AssertionError, match="false"):
        run_shell_block(shell)


def test_the_runnable_blocks_are_found() -> None:
    assert len(SHELL) >= 1 and len(PY_PAGES) >= 2
    every = [b for p in PAGES for b in blocks(p)]
    assert all(b.why for b in every if b.mark == "no-run")  # a block not run says why
