"""What running a kernel in a process of its own costs: G1 in-process against G1 isolated.

Both sides run the same kernel (the built-in vllm.cpp port, loaded as a user's
``MODULE:FUNC`` would be) through G1 with the same population; the isolated
side pays one pipe round trip per call and the child's start. The figures are
ratios from one run on this machine, never asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from fp8lab.codecs import encode
from fp8lab.gates import run_g1
from fp8lab.kernels import FunctionKernel, quant_static
from fp8lab.kernels.sources.box import BOX_ENV, box_tool
from fp8lab.kernels.sources.isolated import KernelHost
from fp8lab.runtime.timing import best_of
from fp8lab.sweeps.range_run import DEFAULT_CHUNK

__all__ = ["IsolationBench", "bench_isolation"]

SOURCE = "fp8lab.kernels:quant_static"


@dataclass(frozen=True)
class IsolationBench:
    """G1's wall time with the kernel in-process and isolated, best of ``repeats``."""

    repeats: int
    calls: int
    in_process_seconds: float
    isolated_seconds: float
    start_seconds: float
    per_call_overhead_ms: float
    isolated_over_in_process: float
    command_in_process_seconds: float
    command_isolated_seconds: float
    command_isolated_over_in_process: float
    chunk_patterns: int = 0
    chunk_in_process_ms: float = 0.0
    chunk_isolated_ms: float = 0.0
    chunk_isolated_over_in_process: float = 0.0
    box: str = ""
    command_box_seconds: float = 0.0
    command_process_seconds: float = 0.0
    command_box_over_process: float = 0.0


_IN_PROCESS = (
    "from fp8lab.cli.main import main; import fp8lab.gates as g; from fp8lab.kernels import "
    "FunctionKernel, quant_static; r = g.run_g1(FunctionKernel('k', quant_static)); "
    "raise SystemExit(g.exit_code([r]))"
)


def _command(argv: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, **(env or {})})


def _box_and_process(argv: list[str], repeats: int) -> tuple[float, float]:
    """The command's best wall time in the box and as a plain process, runs interleaved."""
    boxed: list[float] = []
    plain: list[float] = []
    for _ in range(repeats):
        for env, times in (({}, boxed), ({BOX_ENV: "none"}, plain)):
            t0 = time.perf_counter()
            _command(argv, env)
            times.append(time.perf_counter() - t0)
    return min(boxed), min(plain)


def bench_isolation(repeats: int = 3) -> IsolationBench:
    """Time G1 on the same kernel both ways: the gate alone, then the whole command.

    The whole command in-process is ``python -c`` importing the CLI and running
    G1 on the kernel; isolated, it is ``fp8lab gates --gate G1 --kernel``. The
    chunk figures time one call of the exhaustive proof's encoder on
    :data:`~fp8lab.sweeps.range_run.DEFAULT_CHUNK` patterns (the fast codec,
    loaded as a user's ``MODULE:FUNC`` would be) in-process and isolated. The
    box figures time the whole command in the kernel's box and, with
    ``$FP8LAB_BOX=none``, as a plain child process, interleaved.
    """
    local = FunctionKernel(SOURCE, quant_static)
    in_process = best_of(lambda: run_g1(local), repeats)
    t0 = time.perf_counter()
    with KernelHost("quant", SOURCE) as host:
        start = time.perf_counter() - t0
        kernel = host.kernel()
        isolated = best_of(lambda: run_g1(kernel), repeats)
        calls = host.calls // (repeats + 1)
    python = sys.executable
    command_local = best_of(lambda: _command([python, "-c", _IN_PROCESS]), repeats)
    gates = [python, "-m", "fp8lab", "gates", "--gate", "G1", "--kernel", SOURCE]
    command_isolated = best_of(lambda: _command(gates), repeats)
    tool = box_tool()
    command_box, command_process = _box_and_process(gates, repeats) if tool else (0.0, 0.0)
    chunk = _chunk_call(repeats)
    return IsolationBench(
        repeats=repeats,
        calls=calls,
        in_process_seconds=round(in_process, 4),
        isolated_seconds=round(isolated, 4),
        start_seconds=round(start, 3),
        per_call_overhead_ms=round(1e3 * (isolated - in_process) / max(calls, 1), 3),
        isolated_over_in_process=round(isolated / in_process, 3),
        command_in_process_seconds=round(command_local, 3),
        command_isolated_seconds=round(command_isolated, 3),
        command_isolated_over_in_process=round(command_isolated / command_local, 3),
        chunk_patterns=DEFAULT_CHUNK,
        chunk_in_process_ms=round(1e3 * chunk[0], 2),
        chunk_isolated_ms=round(1e3 * chunk[1], 2),
        chunk_isolated_over_in_process=round(chunk[1] / chunk[0], 3),
        box=tool or "",
        command_box_seconds=round(command_box, 3),
        command_process_seconds=round(command_process, 3),
        command_box_over_process=round(command_box / command_process, 3) if tool else 0.0,
    )


def _chunk_call(repeats: int) -> tuple[float, float]:
    """One exhaustive chunk's encoder call, in-process and isolated, best of ``repeats``."""
    x = (np.arange(DEFAULT_CHUNK, dtype=np.uint32) + np.uint32(0x3C00_0000)).view(np.float32)
    in_process = best_of(lambda: encode(x, "e4m3fn"), repeats)
    run = {"fmt": "e4m3fn", "saturate": True, "nan": "canonical"}
    with KernelHost("encoder", "fp8lab.codecs:encode", run=run) as host:
        host.call("__call__", x)  # the child's first call compiles the codec
        isolated = best_of(lambda: host.call("__call__", x), repeats)
    return in_process, isolated
