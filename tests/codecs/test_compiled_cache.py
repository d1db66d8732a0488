"""fp8lab's compiled loops are built once, then loaded from numba's disk cache by every process.

numba keys a closure's cache entry on a pickle of the closure's cells. A cell
that pickles differently in each process (a nested dispatcher does) makes
every process compile the loop afresh and append one more entry to the
cache. Here a second process, given the first one's cache folder, must load
each loop and compile none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

# the bits encoder (a loop per format and policy) and the amax split (a loop per pair of rules)
SCRIPT = """
import json
import numpy as np
from fp8lab.codecs import rne_bits, special_codes
from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import RULES
from fp8lab.studies import amax_split_compiled as split

fmt = get_format("e4m3fn")
codes = special_codes(fmt, saturate=True, nan="canonical")
bits = rne_bits._kernel(rne_bits.bits_params(fmt, codes))
bits(np.ones(4, np.float32).view(np.int32), np.empty(4, np.uint8))
programs = [split.rule_program(RULES[name]) for name in ("rceil", "ocp-floor")]
verdicts = split._pair(*programs)
verdicts(0x3F800000, np.empty(256, np.bool_), np.empty(256, np.bool_))
stats = {name: [f.stats.cache_hits, f.stats.cache_misses] for name, f in
         (("bits", bits), ("split", verdicts))}
print(json.dumps({name: [sum(h.values()), sum(m.values())] for name, (h, m) in stats.items()}))
"""


def _hits_and_misses(cache: Path) -> dict[str, list[int]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[int]] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_second_process_loads_every_loop_from_the_cache(tmp_path: Path) -> None:
    first = _hits_and_misses(tmp_path)
    assert all(misses == 1 for _, misses in first.values()), first  # an empty cache: built
    second = _hits_and_misses(tmp_path)
    assert second == {name: [1, 0] for name in first}, second
