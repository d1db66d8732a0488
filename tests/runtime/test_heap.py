"""keep_heap: glibc takes both thresholds; elsewhere nothing changes. Codes never do.

That the proof plans' records are unchanged with it is pinned by
tests/sweeps/test_plan_records_pinned.py (every plan chunk calls it).
"""

from __future__ import annotations

import platform

from fp8lab.runtime.heap import keep_heap


def test_keep_heap_answers_the_same_every_time() -> None:
    assert keep_heap() is keep_heap()


def test_glibc_takes_both_thresholds() -> None:
    assert keep_heap() == (platform.libc_ver()[0] == "glibc")
