"""One flag vocabulary, help on every option, no raw RST in --help."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fp8lab.cli.main import build_parser, main
from fp8lab.evidence import proofs

pytestmark = pytest.mark.process

RST = re.compile(r"``|:(func|class|meth|data|mod|attr):`|^\s*\.\. ", re.MULTILINE)
# One concept, every spelling (canonical first): a subcommand that takes the concept
# accepts all of them, and lists the canonical one first.
SPELLINGS = {
    "gate": ("--gate", "--gates"),
    "kernel": ("--kernel", "--kernels"),
    "n": ("-n", "--n"),
    "json": ("--json", "--out"),
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_has_help_and_no_help_shows_raw_rst() -> None:
    missing = []
    for name, sub in _subparsers().items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
        text = sub.format_help()
        assert not RST.search(text), f"{name} --help shows RST: {RST.search(text)}"
    assert not RST.search(build_parser().format_help())
    assert not missing, f"options without help: {missing}"


def test_each_concept_takes_every_spelling_in_every_subcommand() -> None:
    seen = set()
    for name, sub in _subparsers().items():
        options = {s: a for a in sub._actions for s in a.option_strings}
        for concept, spellings in SPELLINGS.items():
            present = [s for s in spellings if s in options]
            if not present:
                continue
            seen.add(concept)
            assert set(present) == set(spellings), (name, concept, present)
            assert len({options[s].dest for s in spellings}) == 1, (name, concept)
            assert options[spellings[0]].option_strings[0] == spellings[0], (name, concept)
    assert seen == set(SPELLINGS)


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["gates", "--gates", "G2"], "gate", "G2"),
        (["mutate", "--gate", "G1"], "gates", "G1"),
        (["detect", "--scales", "1", "--kernel", "a,b"], "kernels", "a,b"),
        (["gates", "--kernels", "m:f"], "kernel", "m:f"),
        (["bench", "-n", "16"], "n", 16),
        (["sweep", "--n", "16"], "n", 16),
        (["gates", "--out", "x.json"], "json", "x.json"),
        (["design", "--scales", "1", "--json", "stem"], "out", "stem"),
    ],
)
def test_aliases_reach_the_same_option(argv: list[str], dest: str, value: Any) -> None:
    args = build_parser().parse_args(argv)
    assert getattr(args, dest, None) == value or value in vars(args).values()


def _fake_proofs(status: str) -> Any:
    def run_proofs(results: Path, **_: Any) -> Any:
        summary = {"gates": {"G1/x": "PASS", "G2/x": status}, "proofs": {}}
        return SimpleNamespace(summary=summary, final=results / "proofs" / "run", partial=False)

    return run_proofs


@pytest.mark.parametrize(("status", "code"), [("PENDING", 3), ("PASS", 0)])
def test_prove_exits_3_when_pending_is_the_only_non_pass(
    status: str, code: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # prove imports run_proofs when it runs (lazy CLI), so the fake goes into its home.
    monkeypatch.setattr(proofs, "run_proofs", _fake_proofs(status))
    assert main(["prove", "--results", str(tmp_path), "--quiet"]) == code
