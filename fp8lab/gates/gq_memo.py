"""GQ's exact expectation, remembered per rule and call arguments across gate runs in one process.

A call's expected codes and scales depend only on the rule and the call's
arguments, never on the kernel under test. A mutation run, a planted-defect
suite or ``rules infer`` judges many kernels on the same calls under the same
rule, so each expectation is computed once and handed out again, read-only,
while its key is among the :data:`KEEP` most recently used (``cachetools``' LRU
cache). The key is a BLAKE2b digest of the rule's every field and of each
argument's dtype, shape and bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from cachetools import LRUCache, cached

__all__ = ["KEEP", "KEPT", "remembered_expectation"]

KEEP = 4096  # calls kept: several runs' calls (396 at most each), tens of MiB at most
Expectation = tuple[np.ndarray, np.ndarray]
KEPT: LRUCache[bytes, Expectation] = LRUCache(maxsize=KEEP)


def _key(rule: object, args: Sequence[Any], compute: object = None) -> bytes:
    digest = hashlib.blake2b(digest_size=32)
    digest.update(repr(rule).encode())  # a frozen dataclass: every field, name and source
    for arg in args:
        array = np.asarray(arg)
        digest.update(repr((array.dtype.str, array.shape)).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.digest()


@cached(KEPT, key=_key)
def remembered_expectation(
    rule: object, args: Sequence[Any], compute: Callable[[], Expectation]
) -> Expectation:
    """``compute()`` (the rule's reference on ``args``), once per distinct rule and args, read-only.

    Raises:
        whatever ``compute`` raises (nothing is kept).
    """
    codes, scales = (np.asarray(a) for a in compute())
    for array in (codes, scales):
        array.setflags(write=False)
    return codes, scales
