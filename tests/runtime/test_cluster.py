"""A dask LocalCluster (loopback) gives the records local processes give.

Needs the ``[dask]`` extra (part of ``[test]``); skipped with that reason without it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import dask
import pytest

from fp8lab.cli.main import main
from fp8lab.detect import brute_force, log_scales, sweep
from fp8lab.evidence.proofs import PROOF_PLAN, run_plan
from fp8lab.gates.records import ProofStatus
from fp8lab.runtime.cluster import Cluster, open_cluster
from fp8lab.runtime.parallel import WorkerLostError, run_tasks
from fp8lab.runtime.progress import Progress
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.exhaustive_chunks import compare_chunk
from fp8lab.sweeps.range_run import RangeRun
from tests.conftest import needs
from tests.dying_encoders import always_exit, exit_once

pytestmark = [pytest.mark.process, needs("distributed", extra="dask")]

# Fields that say where and how fast a record was built, not what it proves.
EXECUTOR_FIELDS = ("wall_seconds", "workers", "executor")
SPAN = range(0x3F70_0000, 0x3F78_0000, 1 << 17)  # four chunks


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two loopback workers; a task is given up after its second worker death."""
    # distributed's defaults join dask's config when it is imported; imported first, so that
    # dask.config.set's undo removes only its one key, not the "distributed" section it made
    import distributed  # noqa: F401

    die_dir = tmp_path_factory.mktemp("die")
    mp = pytest.MonkeyPatch()
    mp.setenv("FP8LAB_TEST_DIE_DIR", str(die_dir))
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), open_cluster(local=2) as c:
        yield c
    mp.undo()


def _bytes(record: Any) -> str:
    fields = asdict(record)
    for name in EXECUTOR_FIELDS:
        fields.pop(name, None)
    return json.dumps(fields, indent=2, sort_keys=True)


@pytest.mark.parametrize(
    ("a", "b", "saturate", "nan", "start", "stop"),
    [
        ("fast", "scan", True, "canonical", 0x3F70_0000, 0x3F90_0000),
        ("tests.defects:one_ulp_off_encoder", "scan", True, "canonical", 0x3F70_0000, 0x3F90_0000),
        ("fast", "ml_dtypes", False, "canonical", 0xFFF0_0000, 1 << 32),
    ],
    ids=["pass", "fail", "nan-exempt"],
)
def test_exhaustive_record_on_dask_is_the_local_record(
    cluster: Cluster, a: str, b: str, saturate: bool, nan: str, start: int, stop: int
) -> None:
    common: dict[str, Any] = {"saturate": saturate, "nan": nan}
    span: dict[str, Any] = {"start": start, "stop": stop, "chunk": 1 << 18}
    local = run_exhaustive(a, b, "e4m3fn", run=RangeRun(workers=1, **span), **common)
    on_dask = RangeRun(
        workers=cluster.workers, executor=cluster.executor, executor_name=cluster.name, **span
    )
    remote = run_exhaustive(a, b, "e4m3fn", run=on_dask, **common)
    assert _bytes(remote) == _bytes(local)
    assert remote.executor == "dask-local 2" and remote.workers == 2
    assert remote.examined == stop - start and remote.chunks == (stop - start) >> 18
    assert remote.covered == [[f"{start:#010x}", f"{stop:#010x}"]]
    assert local.status == ("FAIL" if "defects" in a else "PASS")


def test_brute_force_record_on_dask_is_the_local_record(cluster: Cluster) -> None:
    span: dict[str, Any] = {"start": 0x3F90_0000, "stop": 0x3FA0_0000, "chunk": 1 << 18}
    local = brute_force(0.0092, run=RangeRun(workers=1, **span)).to_dict()
    remote = brute_force(
        0.0092, run=RangeRun(workers=2, executor=cluster.executor, **span)
    ).to_dict()
    local.pop("wall_seconds"), remote.pop("wall_seconds")
    assert remote == local
    assert remote["count"] > 0 and "0x3f9205bc" in remote["inputs"]
    assert remote["examined"] == 1 << 20
    assert remote["covered"] == [["0x3f900000", "0x3fa00000"]]


def test_progress_counts_chunks_from_every_worker(cluster: Cluster) -> None:
    seen: list[int] = []

    class Recorder(Progress):
        def update(self, done: int) -> None:
            seen.append(done)

    run_exhaustive(
        "fast",
        "scan",
        "e4m3fn",
        saturate=True,
        run=RangeRun(
            start=0,
            stop=1 << 20,
            chunk=1 << 17,
            executor=cluster.executor,
            progress=lambda label, total: Recorder(label, total, None),
        ),
    )
    assert seen == list(range(1, 9))


def test_a_worker_that_dies_once_is_retried_to_the_same_results(cluster: Cluster) -> None:
    died = Path(os.environ["FP8LAB_TEST_DIE_DIR"]) / "died"
    died.unlink(missing_ok=True)
    tasks = [("fast", "scan", "e4m3fn", True, "canonical", lo, lo + (1 << 17)) for lo in SPAN]
    remote = run_tasks(exit_once, tasks, workers=cluster.workers, executor=cluster.executor)
    assert died.exists(), "no worker died: the test did not exercise a retry"
    local = run_tasks(compare_chunk, tasks, workers=1)
    assert sorted(remote, key=lambda r: r.start) == sorted(local, key=lambda r: r.start)
    assert sum(r.examined for r in remote) == 1 << 19 and not any(r.fault for r in remote)


def test_a_worker_that_always_dies_is_a_lost_worker(cluster: Cluster) -> None:
    tasks = [("fast", "scan", "e4m3fn", True, "canonical", 0, 1 << 16)]
    with pytest.raises(WorkerLostError):
        run_tasks(always_exit, tasks, workers=cluster.workers, executor=cluster.executor)


def test_an_encoder_that_exits_on_a_dask_worker_ends_only_its_own_process(
    cluster: Cluster,
) -> None:
    record = run_exhaustive(
        "tests.dying_encoders:encoder_exits",
        "scan",
        "e4m3fn",
        saturate=True,
        run=RangeRun(start=0, stop=1 << 16, executor=cluster.executor),
    )
    assert record.status == ProofStatus.KERNEL_ERROR
    assert "kernel process exited with status 1" in record.fault, record.fault
    assert record.examined == 0 and record.covered == []


@pytest.mark.slow
def test_cli_dask_local_writes_the_record_local_processes_write(tmp_path: Path) -> None:
    argv = ["exhaustive", "fast", "scan", "--policy", "sat", "--quiet"]
    argv += ["--start", "0x3f000000", "--stop", "0x3f080000"]
    assert main([*argv, "--workers", "1", "--json", str(tmp_path / "l.json")]) == 0
    assert main([*argv, "--dask-local", "2", "--json", str(tmp_path / "d.json")]) == 0
    local, remote = (json.loads((tmp_path / n).read_text()) for n in ("l.json", "d.json"))
    assert remote.pop("executor") == "dask-local 2" and local.pop("executor") == "processes"
    for name in ("wall_seconds", "workers"):
        local.pop(name), remote.pop(name)
    assert remote == local


def test_proof_plan_on_dask_gives_the_local_records(cluster: Cluster) -> None:
    plan = PROOF_PLAN[:2] + PROOF_PLAN[-2:]
    remote = run_plan(plan, start=0x7F00_0000, stop=0x7F80_0000 + (1 << 16), cluster=cluster)
    for proof, record in zip(plan, remote, strict=True):
        local = proof.run(run=RangeRun(start=0x7F00_0000, stop=0x7F80_0000 + (1 << 16), workers=1))
        assert _bytes(record) == _bytes(local), proof.slug
        assert record.executor == "dask-local 2"


def test_sweep_on_dask_gives_the_local_record(cluster: Cluster) -> None:
    scales = log_scales(64, 2.0**-8, 2.0**8)
    local = sweep(scales, workers=1, batch=16).to_dict()
    remote = sweep(scales, cluster.executor, batch=16).to_dict()
    local.pop("wall_seconds"), remote.pop("wall_seconds")
    assert json.dumps(remote, sort_keys=True) == json.dumps(local, sort_keys=True)
