"""The warm-up reaches every fp8lab module that declares a cached compiled loop.

The check runs in a process of its own, so no earlier test has called a loop
for it. After the warm-up, each such module has a loop that holds a compiled
signature (loaded from the disk cache, or compiled and written to it): one of
its module-level dispatchers, or one its factory made (a loop per format, or
per pair of rules). Loops that only other compiled loops call are built and
cached with their callers, and the mutation checker's are left to it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import fp8lab

pytestmark = pytest.mark.process

SCRIPT = """
import importlib, json, sys
from fp8lab.bench.warm import STEPS
factories = json.loads(sys.argv[3])


def reached():
    found = {}
    for name in json.loads(sys.argv[2]):
        module = importlib.import_module(name)
        compiled = 0
        for value in vars(module).values():
            cache = getattr(value, "_cache", None)
            own = getattr(getattr(value, "py_func", None), "__module__", None) == name
            if own and cache is not None and type(cache).__name__ != "NullCache":
                compiled += len(value.signatures)
        if name in factories:  # the loops its factory made, one per format or pair of rules
            compiled += getattr(module, factories[name]).cache_info().currsize
        found[name] = compiled
    return found


last = json.loads(sys.argv[1])  # the step left to the end: what is cold without it, then with it
for step in STEPS:
    if step != last:
        STEPS[step]()
without = reached()
STEPS[last]()
print(json.dumps([without, reached()]))
"""
# The mutation checker's forks: generated code, compiled per catalogue by the checker itself.
NOT_WARMED = {"fp8lab.mutants.port_forks"}
# Modules whose loops a memoised factory makes: per format and policy, per pair of rules, per
# generated lane of the port's twin (its loops' text is a template in the module).
FACTORIES = {
    "fp8lab.codecs.rne_bits": "_kernel",
    "fp8lab.studies.amax_split_compiled": "_pair",
    "fp8lab.kernels.f32tofp8_twin": "_compile",
}


def _modules_with_cached_loops() -> list[str]:
    root = Path(fp8lab.__file__).parent
    return sorted(
        ".".join(("fp8lab", *path.relative_to(root).with_suffix("").parts))
        for path in root.rglob("*.py")
        if "cache=True" in path.read_text(encoding="utf-8") and path.name != "warm.py"
    )


def _cold(reached: dict[str, int]) -> list[str]:
    assert len(reached) >= 8, reached  # codecs, sweeps, detector, GEMM ports, split, twin
    return sorted(name for name, n in reached.items() if n == 0 and name not in NOT_WARMED)


def test_every_cached_loop_is_compiled_by_the_warm_up() -> None:
    modules = json.dumps(_modules_with_cached_loops())
    argv = [sys.executable, "-c", SCRIPT, json.dumps("sweeps"), modules, json.dumps(FACTORIES)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    without_sweeps, every_step = json.loads(done.stdout.splitlines()[-1])
    assert _cold(every_step) == []
    # planted: before its sweeps step, the warm-up has left the amax and quotient loops cold
    assert _cold(without_sweeps) == ["fp8lab.sweeps.amax", "fp8lab.sweeps.quotient"]
