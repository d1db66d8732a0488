"""G3's exact expectation, remembered per operand bytes across gate runs in one process.

The seed reference of a case depends only on its operand codes, scales and
output dtype, never on the kernel under test. A mutation run judges many
kernels on the same cases, so each expectation is computed once and handed
out again, read-only, while its key is among the :data:`KEEP` most recently
used (``cachetools``' LRU cache). The key is a BLAKE2b digest of the operands'
bytes, shapes and dtypes and of the scales and output dtype.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from cachetools import LRUCache, cached

from fp8lab.refs.gemm_exact import SeedReference, seed_reference

__all__ = ["KEEP", "KEPT", "remembered_reference"]

KEEP = 64  # expectations kept: more than one run's cases, a few MiB at the largest
KEPT: LRUCache[bytes, SeedReference] = LRUCache(maxsize=KEEP)


def _key(
    a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out_dtype: str, accumulator: str = "float32"
) -> bytes:
    digest = hashlib.blake2b(digest_size=32)
    scales = [np.asarray(s, np.float64) for s in (s_in, s_w)]
    for operand in (a, b, *scales):
        digest.update(repr((operand.dtype.str, operand.shape)).encode())
        digest.update(np.ascontiguousarray(operand).tobytes())
    digest.update(repr((out_dtype, accumulator)).encode())
    return digest.digest()


@cached(KEPT, key=_key)
def remembered_reference(
    a: np.ndarray,
    b: np.ndarray,
    s_in: Any,
    s_w: Any,
    out_dtype: str,
    accumulator: str = "float32",
) -> SeedReference:
    """:func:`fp8lab.refs.gemm_exact.seed_reference`, computed once per distinct input, read-only.

    Raises:
        ValueError: as :func:`~fp8lab.refs.gemm_exact.seed_reference` (nothing is kept).
    """
    ref = seed_reference(a, b, s_in, s_w, out_dtype, accumulator)
    for array in (ref.want, ref.abs_sum, ref.tolerance):
        array.setflags(write=False)
    return ref
