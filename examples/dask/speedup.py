"""Speed-up of a dask LocalCluster with two workers against one, measured in one run.

Usage (needs fp8lab[dask]):
    python examples/dask/speedup.py [--stop 0x10000000] [--workers 2]

Runs ``fp8lab exhaustive fast scan --policy sat --stop STOP`` once on a
LocalCluster of 1 worker and once on one of N, checks that the two records
agree except for timing and worker fields, and prints both wall times and
their ratio. Each cluster is started and warmed (one tiny proof) before timing.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict

from fp8lab.runtime.cluster import open_cluster
from fp8lab.sweeps.exhaustive import run_exhaustive
from fp8lab.sweeps.range_run import RangeRun


def _timed(workers: int, stop: int) -> tuple[float, dict[str, object]]:
    with open_cluster(local=workers) as cluster:
        on = {"executor": cluster.executor, "workers": cluster.workers}
        warm = RangeRun(stop=1 << 16, **on)
        run_exhaustive("fast", "scan", "e4m3fn", saturate=True, run=warm)  # warm each worker
        t0 = time.monotonic()
        record = run_exhaustive(
            "fast", "scan", "e4m3fn", saturate=True, run=RangeRun(stop=stop, **on)
        )
        seconds = time.monotonic() - t0
    fields = asdict(record)
    for name in ("wall_seconds", "workers", "executor"):
        fields.pop(name)
    assert record.status == "PASS", record
    return seconds, fields


def main() -> None:
    """Time 1 worker, then N, and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop", type=lambda t: int(t, 0), default=0x1000_0000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    one, rec_one = _timed(1, args.stop)
    many, rec_many = _timed(args.workers, args.stop)
    assert rec_one == rec_many, "records differ beyond timing and worker fields"
    print(f"exhaustive fast vs scan e4m3fn sat, patterns [0, {args.stop:#x}):")
    print(f"  dask-local 1: {one:.2f} s")
    print(f"  dask-local {args.workers}: {many:.2f} s")
    print(f"  speed-up {one / many:.2f}x (records identical but for timing and worker fields)")


if __name__ == "__main__":
    main()
