"""G3's exact expectation, remembered per operand bytes across gate runs in one process.

The seed reference of a case depends only on its operand codes, scales and
output dtype, never on the kernel under test. A mutation run judges many
kernels on the same cases, so each expectation is computed once and handed
out again, read-only, while its key is among the :data:`KEEP` most recent.
The key is a BLAKE2b digest of the operands' bytes, shapes and dtypes and
of the scales and output dtype.
"""

from __future__ import annotations

import hashlib

import numpy as np

from fp8lab.gates.kept import Kept
from fp8lab.refs.gemm_exact import SeedReference, seed_reference

__all__ = ["KEEP", "remembered_reference"]

KEEP = 64  # expectations kept: more than one run's cases, a few MiB at the largest
_KEPT: Kept[SeedReference] = Kept(KEEP)


def _key(a: np.ndarray, b: np.ndarray, s_in: float, s_w: float, out_dtype: str) -> bytes:
    digest = hashlib.blake2b(digest_size=32)
    for operand in (a, b):
        digest.update(repr((operand.dtype.str, operand.shape)).encode())
        digest.update(np.ascontiguousarray(operand).tobytes())
    digest.update(repr((float(s_in).hex(), float(s_w).hex(), out_dtype)).encode())
    return digest.digest()


def remembered_reference(
    a: np.ndarray, b: np.ndarray, s_in: float, s_w: float, out_dtype: str
) -> SeedReference:
    """:func:`fp8lab.refs.gemm_exact.seed_reference`, computed once per distinct input.

    Raises:
        ValueError: as :func:`~fp8lab.refs.gemm_exact.seed_reference` (nothing is kept).
    """
    return _KEPT.get(
        _key(a, b, s_in, s_w, out_dtype),
        lambda: seed_reference(a, b, s_in, s_w, out_dtype),
        _freeze,
    )


def _freeze(ref: SeedReference) -> None:
    for array in (ref.want, ref.abs_sum, ref.tolerance):
        array.setflags(write=False)
