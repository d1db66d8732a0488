"""Each scheme's error against the exact value: dequantize the port's output and compare with x.

``x`` (float32) is the exact value; the dequantized value ``decode(code) * scale``
is exact in float64 (an e4m3fn significand has 4 bits, a float32 scale 24, an
e8m0 scale is a power of two), so only the relative error's division rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode
from fp8lab.kernels.scheme import scheme_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.specs.scale_rules import RULES, Granularity, ScaleRule, Storage, get_rule

__all__ = ["ERROR_K", "ErrorRow", "dequantize", "relative_errors", "scheme_errors"]

ERROR_K = 4096  # columns of the seeded ``random`` case: 8 rows x 4096, six decades of rows


def dequantize(codes: np.ndarray, scales: np.ndarray, rule: str | ScaleRule) -> np.ndarray:
    """``decode(code) * scale`` in float64, each scale broadcast over what it covers.

    e8m0 scale bytes decode as ``2**(byte - 127)``; byte 255 is NaN (OCP MX v1.0, E8M0).
    A multiplier scale (``storage = "multiplier"``) divides instead: ``decode(code) /
    scale``, rounded once in float64.

    Raises:
        ValueError: for an unknown rule or codes that are not [M, K].
    """
    spec = get_rule(rule)
    c = np.asarray(codes)
    if c.ndim != 2:
        raise ValueError(f"codes must be [M, K], got shape {c.shape}")
    m, k = c.shape
    values = decode(c, spec.element, np.float64)
    if spec.scale_format == "e8m0fnu":
        b = np.asarray(scales, np.uint8).astype(np.float64)
        s = np.where(b == 255, np.nan, np.ldexp(1.0, (b - 127).astype(np.int64)))
    else:
        s = np.asarray(scales, np.float32).astype(np.float64)
    if spec.granularity is Granularity.TENSOR:
        per_word = s.reshape(1, 1)
    elif spec.granularity is Granularity.ROW:
        per_word = s.reshape(m, 1)
    else:
        assert spec.block is not None
        per_word = np.repeat(s.reshape(m, k // spec.block), spec.block, axis=1)
    if spec.storage is Storage.MULTIPLIER:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = values / per_word
        return out
    out = values * per_word
    return out


def relative_errors(
    x: np.ndarray, rule: str | ScaleRule
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """``|dequantized - x| / |x|`` for every finite nonzero element of ``x`` [M, K], flattened.

    Returns:
        The errors, and where the dequantized value is zero (flushed).
    """
    codes, scales = scheme_quant(x, rule)
    exact = np.asarray(x, np.float32).astype(np.float64)
    keep = np.isfinite(exact) & (exact != 0)
    got = dequantize(codes, scales, rule)[keep]
    return np.abs(got - exact[keep]) / np.abs(exact[keep]), got == 0


@dataclass(frozen=True)
class ErrorRow:
    """One rule's relative errors: how many, how many exact, flushed to zero, quantiles."""

    rule: str
    words: int
    exact: int
    flushed_to_zero: int
    median: float
    p99: float
    max: float


def scheme_errors(seed: int) -> tuple[list[ErrorRow], dict[str, npt.NDArray[np.float64]]]:
    """Every rule's relative errors on the seeded ``random`` case (8 x :data:`ERROR_K`).

    Returns:
        The summary rows and each rule's errors (for the histogram).
    """
    rows, errors = [], {}
    for name, rule in RULES.items():
        x = dict(scheme_population(rule.element, seed, k=ERROR_K))["random"]
        e, flushed = relative_errors(x, rule)
        errors[name] = e
        rows.append(
            ErrorRow(
                name,
                int(e.size),
                int((e == 0).sum()),
                int(flushed.sum()),
                float(np.median(e)),
                float(np.quantile(e, 0.99)),
                float(e.max()),
            )
        )
    return rows, errors
