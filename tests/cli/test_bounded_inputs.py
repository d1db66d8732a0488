"""Files a user names are read bounded: a FIFO or device is refused at once, TOML depth is capped,
and text that cannot be encoded is printed escaped. Each is one line and exit status 2."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.kernels.sources.wire import kernel_text, plain_header

GQ = ["gates", "--gate", "GQ", "--scheme", "fp8-tensor"]


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1, err
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "named.fifo"
    os.mkfifo(path)
    return path


def test_a_fifo_rule_file_is_refused_without_blocking(
    fifo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*GQ, "--rule-file", str(fifo)]) == 2
    assert "is a FIFO, not a regular file" in one_line(capsys)


def test_a_device_rule_file_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*GQ, "--rule-file", "/dev/zero"]) == 2
    assert "is a character device" in one_line(capsys)


@pytest.mark.parametrize(
    "value",
    ["[" * 50_000 + "]" * 50_000, "{ b = " * 5_000 + "1" + " }" * 5_000],
    ids=["arrays", "inline-tables"],
)
def test_a_deep_toml_rule_file_is_one_line(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(f'[[rule]]\nname = "deep"\nx = {value}\n')
    assert main([*GQ, "--rule-file", str(path)]) == 2
    assert "nested deeper than 64" in one_line(capsys)


def test_a_deep_dotted_key_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dotted.toml"
    path.write_text("[[rule]]\n" + ".".join(["a"] * 50_000) + " = 1\n")
    assert main([*GQ, "--rule-file", str(path)]) == 2
    assert "nested deeper than 64" in one_line(capsys)


def test_a_fifo_params_file_is_refused(fifo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evidence", "--params", str(fifo), "--results", str(fifo.parent)]) == 2
    assert "is a FIFO, not a regular file" in one_line(capsys)


def test_a_path_that_is_not_utf8_prints_escaped_on_a_strict_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    monkeypatch.setattr("sys.stderr", err)
    folder = os.fsdecode(bytes(tmp_path) + b"/bundle\xff")
    assert main(["gates", "--gate", "G1", "--outputs", folder]) == 2
    err.flush()
    text = err.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert "bundle\\udcff" in text and len(text.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("name\nG1 fake PASS", "name\\x0aG1 fake PASS"),
        ("bad\udcffname", "bad\\udcffname"),
        ("\x1b[32mPASS\x1b[0m", "\\x1b[32mPASS\\x1b[0m"),
        ("right\u202eleft", "right\\u202eleft"),
        ("plain", "plain"),
    ],
)
def test_text_from_a_kernel_is_one_printable_line(text: str, shown: str) -> None:
    assert kernel_text(text) == shown
    assert plain_header({"name": text, "methods": [text]}) == {"name": shown, "methods": [shown]}
    shown.encode("utf-8")  # no lone surrogate is left


def test_long_text_from_a_kernel_is_cut() -> None:
    assert kernel_text("x" * 10_000, 400) == "x" * 400 + "..."
