"""`fp8lab evidence --dask-local N` / `--scheduler` runs notebook sweeps on dask.

The runner opens the cluster once and names it to the notebook kernels in
``$FP8LAB_SCHEDULER``; a stub notebook's proof and brute-force records must
be the local ones, byte for byte, except the executor fields.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from fp8lab.cli.main import main
from fp8lab.detect import brute_force
from fp8lab.evidence.proofs import PROOF_PLAN, run_plan
from fp8lab.runtime.cluster import (
    SCHEDULER_ENV,
    ClusterError,
    _close_ambient,
    ambient_cluster,
    open_cluster,
)
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun
from tests.notebooks.conftest import write_notebook

pytestmark = pytest.mark.notebook

needs_dask = pytest.mark.skipif(
    find_spec("distributed") is None, reason="dask.distributed missing: pip install 'fp8lab[dask]'"
)
EXECUTOR_FIELDS = ("wall_seconds", "workers", "executor")
START, STOP = 0x7F00_0000, 0x7F10_0000
BRUTE = {"start": 0x3F90_0000, "stop": 0x3FA0_0000, "chunk": 1 << 18}

STUB = f"""
import json, os
from dataclasses import asdict
from fp8lab.detect import brute_force
from fp8lab.evidence.proofs import PROOF_PLAN, run_plan
from fp8lab.sweeps.range_run import RangeRun
records = run_plan(PROOF_PLAN[:2], start={START}, stop={STOP})
brute = brute_force(0.0092, run=RangeRun(**{BRUTE!r})).to_dict()
out = {{"proofs": [asdict(r) for r in records], "brute": brute,
        "scheduler": os.environ.get("{SCHEDULER_ENV}", "")}}
open(os.path.join(run_dir, "records.json"), "w").write(json.dumps(out, sort_keys=True))
"""


def _strip(fields: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in fields.items() if k not in EXECUTOR_FIELDS}, sort_keys=True)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.slow
@needs_dask
def test_evidence_dask_local_gives_the_notebook_the_local_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_notebook(tmp_path / "nb", "stub", STUB)
    argv = ["evidence", "stub", "--notebooks", str(tmp_path / "nb")]
    assert main([*argv, "--results", str(tmp_path / "res"), "--dask-local", "1"]) == 0
    assert "sweeps and proofs run on dask-local 1 (1 workers)" in capsys.readouterr().out
    (written,) = (tmp_path / "res").rglob("records.json")
    remote = json.loads(written.read_text())
    assert remote["scheduler"].startswith("tcp://127.0.0.1:")
    for proof, record in zip(PROOF_PLAN[:2], remote["proofs"], strict=True):
        local = proof.run(run=RangeRun(start=START, stop=STOP, workers=1))
        where = f"dask {remote['scheduler']}"
        assert record["executor"] == where, "ran locally, not on the cluster"
        assert _strip(record) == _strip(asdict(local)), proof.slug
        assert record["examined"] == STOP - START
    local_brute = brute_force(0.0092, run=RangeRun(workers=1, **BRUTE)).to_dict()
    assert _strip(remote["brute"]) == _strip(local_brute)
    assert remote["brute"]["count"] > 0


@needs_dask
def test_a_process_given_a_scheduler_runs_its_default_pools_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with open_cluster(local=1) as cluster:
        monkeypatch.setenv(SCHEDULER_ENV, cluster.address)
        try:
            (record,) = run_plan(PROOF_PLAN[:1], start=START, stop=STOP)
            explicit = run_exhaustive(
                "fast", "scan", "e4m3fn", saturate=True, run=RangeRun(stop=4096, workers=1)
            )
        finally:
            _close_ambient()
    assert record.executor == f"dask {cluster.address}" and record.examined == STOP - START
    assert explicit.executor == "processes"  # a worker count asked for is honoured


def test_a_bad_scheduler_variable_is_an_error_never_a_silent_local_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert ambient_cluster() is None
    monkeypatch.setenv(SCHEDULER_ENV, "localhost:8786")
    with pytest.raises(ClusterError, match="tcp://HOST:PORT"):
        run_exhaustive("fast", "scan", "e4m3fn", saturate=True, run=RangeRun(stop=1 << 12))
    with pytest.raises(ClusterError, match="tcp://HOST:PORT"):
        brute_force(0.5, run=RangeRun(stop=1 << 12))
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://host:99999")  # the port check --scheduler makes
    with pytest.raises(ClusterError, match="tcp://HOST:PORT"):
        run_exhaustive("fast", "scan", "e4m3fn", saturate=True, run=RangeRun(stop=1 << 12))


@pytest.mark.parametrize(
    "flags",
    [
        ["--scheduler", "localhost:8786"],
        ["--scheduler", "tcp://host:99999"],
        ["--dask-local", "0"],
        ["--dask-local", "2", "--scheduler", "tcp://127.0.0.1:8786"],
        ["--check", "--dask-local", "2"],
    ],
)
def test_bad_engine_flags_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    write_notebook(tmp_path / "nb", "stub", "x = 1")
    argv = ["evidence", "--notebooks", str(tmp_path / "nb"), "--results", str(tmp_path / "r")]
    try:
        status = main([*argv, *flags])
    except SystemExit as exc:  # argparse refusals
        status = exc.code if isinstance(exc.code, int) else 1
    assert status == 2
    _one_line(capsys.readouterr().err)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.ipynb"))


def test_without_dask_the_flag_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    write_notebook(tmp_path / "nb", "stub", "x = 1")
    argv = ["evidence", "--notebooks", str(tmp_path / "nb"), "--results", str(tmp_path / "r")]
    assert main([*argv, "--dask-local", "2"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "pip install 'fp8lab[dask]'" in line
    assert not any((tmp_path / "r").rglob("*.ipynb"))


def test_the_cli_reads_no_scheduler_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the flags put a command on a cluster: a stray variable is neither used nor fatal."""
    monkeypatch.setenv(SCHEDULER_ENV, "localhost:8786")  # would be an error if read
    argv = ["exhaustive", "fast", "scan", "--policy", "sat", "--stop", "0x1000", "--quiet"]
    assert main([*argv, "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["executor"] == "processes"
    assert SCHEDULER_ENV not in os.environ
