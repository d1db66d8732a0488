"""The facts the manual states come from data, and the data covers what it must.

Pages hold ``{{ fp8lab:... }}`` tokens (``fp8lab.cli.doc_facts``), so these
tests check the data the tokens are made from, never a sentence of prose.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fp8lab.cli.doc_facts import TOKEN, DocFactError, expand, published_runs
from fp8lab.cli.exit_statuses import exit_epilog, exit_statuses
from fp8lab.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md"))


def _subcommands() -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_every_subcommand_has_its_exit_statuses() -> None:
    table = exit_statuses()
    assert set(table) == _subcommands()
    for name, row in table.items():
        assert row[0] and row[2].startswith("usage"), name
        assert set(row) <= {0, 1, 2, 3, 4}, name


def test_help_ends_with_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gates", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert " ".join(exit_epilog("gates").split()) in out
    assert "3 nothing failed, a gate PENDING" in out


def test_every_token_in_the_manual_is_made() -> None:
    used = [m.group(0) for page in PAGES for m in TOKEN.finditer(page.read_text())]
    assert len(used) >= 5
    for page in PAGES:
        assert not TOKEN.search(expand(page.read_text(), ROOT)), page


def test_the_published_runs_cover_every_notebook_and_the_proofs() -> None:
    runs = published_runs(ROOT / "results")
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert notebooks | {"proofs"} <= set(runs)
    for kind, path in runs.items():
        manifest = json.loads((ROOT / path / "manifest.json").read_text())
        assert manifest["status"] == "complete" and manifest["kind"] == kind, path


@pytest.mark.parametrize(
    "token", ["{{ fp8lab:no-such-fact }}", "{{ fp8lab:run:no_such_kind }}", "{{ fp8lab:run }}"]
)
def test_an_unknown_token_or_a_missing_run_fails(token: str) -> None:
    with pytest.raises(DocFactError):
        expand(f"text {token} text", ROOT)


def test_the_check_scales_count_is_the_notebooks() -> None:
    assert expand("{{ fp8lab:check-scales }}", ROOT).isdigit()
