"""The kernel's box, through each tool this machine has: what the kernel can reach from inside."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from fp8lab.kernels.sources import box
from fp8lab.kernels.sources.box import BOX_ENV, TOOLS, _works, box_tool, exit_status
from fp8lab.kernels.sources.isolated import KernelHost

PROBE = """
import os
from pathlib import Path


def _try(attack):
    try:
        attack()
    except OSError as exc:
        return type(exc).__name__ + ":" + str(exc.errno)
    return "done"


def probe(outside):
    return (
        _try(lambda: Path(outside).write_text("planted")),
        _try(lambda: Path(os.environ["TMPDIR"], "mine").write_text("ok")),
        _try(lambda: os.kill(int(os.environ["PROBE_PARENT"]), 0)),
        str(os.getpid()),
        str(len([p for p in os.listdir("/proc") if p.isdigit()])),
    )
"""


@pytest.fixture
def probe_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "box_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PROBE_PARENT", str(os.getpid()))
    return tmp_path


def test_none_turns_the_box_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BOX_ENV, "none")
    assert box_tool() is None


def test_a_box_exit_of_128_plus_n_is_signal_n() -> None:
    assert [exit_status(s) for s in (134, 137, 3, 0, None, 255)] == [-6, -9, 3, 0, None, 255]


@pytest.mark.process
@pytest.mark.parametrize("tool", TOOLS)
def test_inside_the_box_only_the_private_folder_is_writable_and_fp8lab_is_not_there(
    tool: str, probe_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _works(tool):
        pytest.skip(f"{tool} cannot make a user namespace here")
    monkeypatch.setenv(BOX_ENV, tool)
    outside = probe_dir / "outside.txt"
    with KernelHost("callable", "box_probe:probe", timeout=120) as host:
        assert host.isolation == "namespace", host.box_error
        written, private, signal, pid, seen = host.call("__call__", str(outside))
        tmp = host.box.tmp if host.box else ""
        assert (Path(tmp) / "mine").read_text() == "ok"
    assert written == "OSError:30" and not outside.exists()  # EROFS
    assert private == "done" and not Path(tmp).exists()  # removed with the box
    assert signal == "ProcessLookupError:3"  # fp8lab's pid is no process in the box
    assert int(pid) != os.getpid() and int(seen) < 10 and sys.platform == "linux"


def test_a_box_folder_whose_owner_is_gone_is_removed_by_the_next_box(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(box, "box_tool", lambda: "bwrap")  # nothing is started here
    dead = max(psutil.pids()) + 100_000  # above every pid in use
    orphan = tmp_path / f"fp8lab-box-{dead}-x"
    live = tmp_path / f"fp8lab-box-{os.getpid()}-y"
    for folder in (orphan, live):
        folder.mkdir()
    made = box.open_box()
    assert made is not None and Path(made.tmp).parent == tmp_path
    made.close()
    assert not orphan.exists() and live.exists()


def test_under_coverage_the_boxs_line_data_is_written_inside_and_moved_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    coverage = pytest.importorskip("coverage")
    from coverage.config import CoverageConfig

    outside = tmp_path / "measured" / "data"
    outside.parent.mkdir()
    config = CoverageConfig()
    config.data_file = str(outside)
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", config.serialize())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(box, "box_tool", lambda: "bwrap")  # nothing is started here
    made = box.open_box()
    assert made is not None
    inside = CoverageConfig.deserialize(made.env()["COVERAGE_PROCESS_CONFIG"])
    assert Path(inside.data_file).parent == Path(made.tmp)  # the one folder the box can write
    Path(inside.data_file + ".box.pid2.x").write_text("lines")
    Path(made.tmp, "kernel.txt").write_text("the kernel's")

    class Measured:
        config = CoverageConfig()

    Measured.config.data_file = str(outside)
    monkeypatch.setattr(coverage.Coverage, "current", classmethod(lambda cls: Measured))
    made.close()
    assert [p.name for p in outside.parent.iterdir()] == ["data.box.pid2.x"]
    assert not Path(made.tmp).exists()


def test_without_coverage_the_box_sets_no_coverage_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)
    made = box.Box("bwrap", tempfile.mkdtemp())
    try:
        assert "COVERAGE_PROCESS_CONFIG" not in made.env()
    finally:
        made.close()
