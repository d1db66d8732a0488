"""A full disk or a read-only folder ends a command with one line and exit 1, no traceback."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from fp8lab.cli.main import main


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_machine_error_is_one_line_and_exit_1(
    code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fp8lab.cli.record_paths as record_paths

    def full(path: Path, data: bytes, *, overwrite: bool = False) -> Path:
        raise OSError(code, "No space left on device" if code == errno.ENOSPC else "Read-only")

    monkeypatch.setattr(record_paths, "write_atomic", full)
    out = tmp_path / "g.json"
    assert main(["gates", "--gate", "G1", "--json", str(out)]) in (1, 2)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fp8lab gates: error:" in err[0]
    assert not out.exists()


def test_another_os_error_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    import fp8lab.cli.gates_cmd as gates_cmd

    def broken(args: object) -> int:
        raise OSError(errno.EBADF, "a bug, not the machine")

    monkeypatch.setattr(gates_cmd, "_run", broken)
    with pytest.raises(OSError, match="a bug"):
        main(["gates", "--gate", "G1"])
