"""Every numeric option of every subcommand: a value out of its declared range is one line, exit 2.

The options are found by walking the parsers, not listed by hand: an option is
numeric when its argparse ``type`` declares a range (``accepts``). A value
the range holds must be accepted; any other is refused at parse, before any
work, with one line on stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from fp8lab.cli.main import build_parser, main

VALUES = ("0", "-1", "nan", "inf", "1e23", "12345678901234567890")


def _actions(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, (*path, name))
        else:
            yield path, action


ACTIONS = list(_actions(build_parser()))
NUMERIC = [(path, a) for path, a in ACTIONS if callable(getattr(a.type, "accepts", None))]


def _number(text: str) -> float:
    return float(text)


def test_the_walk_finds_every_subcommands_numeric_options() -> None:
    commands = {path[0] for path, _ in NUMERIC}
    assert {"gates", "exhaustive", "bench", "gemm-bench", "order", "detect", "sweep"} <= commands
    assert len(NUMERIC) > 40


def _id(value: object) -> str:
    if isinstance(value, tuple):
        return "-".join(value)
    action = value
    assert isinstance(action, argparse.Action)
    return (action.option_strings or [action.dest])[0]


@pytest.mark.parametrize(("path", "action"), ACTIONS, ids=_id)
def test_no_number_is_read_without_a_declared_range(
    path: tuple[str, ...], action: argparse.Action
) -> None:
    if action.type is None or callable(getattr(action.type, "accepts", None)):
        return
    assert action.type not in (int, float), f"{' '.join(path)} {action.option_strings}"
    for text in ("1", "16", "0.5"):
        try:
            value = action.type(text)  # type: ignore[misc]
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        assert not isinstance(value, int | float) or isinstance(value, bool), (
            f"{' '.join(path)} {action.option_strings} reads numbers with no declared range"
        )


CASES = [
    (path, action.option_strings[0] if action.option_strings else action.dest, action, value)
    for path, action in NUMERIC
    for value in VALUES
]


@pytest.mark.parametrize(
    ("path", "option", "action", "value"),
    CASES,
    ids=[f"{' '.join(p)} {o} {v}" for p, o, _, v in CASES],
)
def test_a_value_outside_the_declared_range_is_one_line_and_exit_2(
    path: tuple[str, ...],
    option: str,
    action: argparse.Action,
    value: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kind = action.type.kind  # type: ignore[union-attr]
    integral = kind is float or value.lstrip("-").isdigit()
    if integral and action.type.accepts(_number(value)):  # type: ignore[union-attr]
        assert action.type(value) == _number(value)  # type: ignore[misc]
        return
    assert main([*path, option, value]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "error:" in err
