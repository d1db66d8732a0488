"""Designed float32 inputs for the bit-field kernel, and its comparison with the table."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np

from fp8lab.codecs.policy import SpecialCodes, special_codes
from fp8lab.codecs.rne_bits import BitsParams, bits_params, encode_float32_bits_rne
from fp8lab.codecs.table import encode_float32_bits, float32_table
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.nan import NAN_POLICIES, NanPolicy
from tests.conftest import midpoint_probes, special_probes

Kernel = Callable[[np.ndarray, BitsParams], np.ndarray]


def policies(fmt: FormatSpec) -> Iterator[tuple[bool, NanPolicy, SpecialCodes]]:
    """Every (saturate, NaN policy) an encoder accepts for ``fmt``, with its codes."""
    for saturate in (True, False):
        for policy in NAN_POLICIES.values():
            if policy.to_max:
                continue
            try:
                yield saturate, policy, special_codes(fmt, saturate=saturate, nan=policy)
            except ValueError:
                continue


def designed_bits(fmt: FormatSpec) -> np.ndarray:
    """Midpoints ±1 ulp, every code's value ±1 ulp, specials, float32 subnormals, NaNs."""
    with np.errstate(over="ignore"):  # e8m0fnu's overflow candidate 2**128 is inf in float32
        mags = np.array(
            [float(fmt.magnitude_value(i)) for i in range(fmt.max_code + 2)], np.float32
        )
        values = np.concatenate(
            [
                midpoint_probes(fmt, np.float32),
                special_probes(fmt).astype(np.float32),
                mags,
                np.nextafter(mags, np.float32(np.inf)),
                np.nextafter(mags, np.float32(0)),
                np.array([np.finfo(np.float32).max, np.finfo(np.float32).tiny], np.float32),
            ]
        )
    bits = values.view(np.uint32)
    tiny = np.array(
        [1, 2, 3, 0x3FFFFF, 0x400000, 0x400001, 0x5FFFFF, 0x600000, 0x600001, 0x7FFFFF],
        np.uint32,
    )  # float32 subnormals: 2**-149 up to just below 2**-126, the halfway points between
    nans = np.array([0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x7FA00000], np.uint32)
    every = np.concatenate([bits, tiny, nans, np.array([0, 0x7F800000], np.uint32)])
    return np.concatenate([every, every | np.uint32(0x8000_0000)])


def mismatches(
    fmt: FormatSpec,
    kernel: Kernel = encode_float32_bits_rne,
    first: int | None = None,
    saturating: bool | None = None,
) -> list[tuple[str, str, int, int, int]]:
    """(saturate, policy, input bits, kernel code, table code) where ``kernel`` differs.

    ``first``: only the first that many of :func:`policies` (each policy compiles a
    kernel), of those with ``saturate == saturating`` when that is given.
    """
    bits = designed_bits(fmt)
    found = []
    chosen = (p for p in policies(fmt) if saturating is None or p[0] == saturating)
    for saturate, policy, codes in itertools.islice(chosen, first):
        got = kernel(bits, bits_params(fmt, codes))
        want = encode_float32_bits(bits, float32_table(fmt, saturate, policy))
        for i in np.flatnonzero(got != want):
            found.append((str(saturate), policy.name, int(bits[i]), int(got[i]), int(want[i])))
    return found
