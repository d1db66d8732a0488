"""``make test-fast`` leaves tests out by path and id; pytest ignores an id that no longer exists.

So a renamed slow test would quietly join the edit loop. Every ``--ignore`` in the
Makefile's FAST_ARGS must name a path that exists, and every ``--deselect`` a test
function that its file still defines.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def fast_args(makefile: str) -> list[str]:
    """The words of FAST_ARGS (its continuation lines joined)."""
    block = re.search(r"^FAST_ARGS :=(.*?)(?<!\\)\n", makefile, re.M | re.S)
    assert block, "no FAST_ARGS in the Makefile"
    return block.group(1).replace("\\\n", " ").split()


def missing(words: list[str], root: Path) -> list[str]:
    """The ``--ignore``/``--deselect`` targets among ``words`` that name nothing under ``root``."""
    gone = []
    for word in words:
        if word.startswith("--ignore="):
            if not (root / word.split("=", 1)[1]).exists():
                gone.append(word)
        elif word.startswith("--deselect="):
            path, _, test = word.split("=", 1)[1].partition("::")
            name = test.split("[", 1)[0]
            file = root / path
            if not file.is_file() or f"def {name}(" not in file.read_text():
                gone.append(word)
    return gone


def test_every_left_out_test_still_exists() -> None:
    words = fast_args((REPO / "Makefile").read_text())
    assert any(w.startswith("--deselect=") for w in words)
    assert missing(words, REPO) == []


def test_a_renamed_test_is_found(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_new_name():\n    pass\n")
    words = ["--deselect=tests/test_x.py::test_old_name", "--ignore=tests/gone.py"]
    assert missing(words, tmp_path) == words
    assert missing(["--deselect=tests/test_x.py::test_new_name"], tmp_path) == []
