"""Reference static quantization: the element path of a given-scale rule, from its definition.

:func:`reference_quant_static` is the seed's rule, ``scan(float32(x) *
float32(1/s))``, G1's default. :func:`reference_static_quant` reads any static
rule (``scale_source = "given"``, :mod:`fp8lab.specs.static_rules`): each
element's scale from the rule's granularity (one per tensor, row or block of
a row), then ``apply`` (``x / s``, ``x * float32(1/s)`` or ``x * s``), the
``arithmetic`` dtype (on bfloat16 input with ``input``: the scale and the
quotient rounded to bfloat16, to nearest even, by their bits; with
``input-quotient`` the quotient alone), the ``signed_zero`` zero point, the
``clamp``, ties away from zero where the rule says (the exact midpoints
replaced by their upper neighbour), and the scan reference's cast
(SATFINITE or not, as ``saturate`` says; NaN to the positive canonical
code). Each float32 operation is one IEEE 754 operation
of numpy's, correctly rounded to nearest even (§4.3.1); the bfloat16
rounding, the clamp and the cast are written out here. It never imports the
kernels it checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.refs.schemes import ties_away_table
from fp8lab.specs.formats import FORMATS, get_format
from fp8lab.specs.scale_rules import (
    Apply,
    Arithmetic,
    Clamp,
    ElementRounding,
    Granularity,
    ScaleRule,
    SignedZero,
)

__all__ = ["reference_quant_static", "reference_static_quant", "static_scales_shape"]

_E4M3FN = FORMATS["e4m3fn"]
_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)


def reference_quant_static(x: np.ndarray, scale: Any) -> npt.NDArray[np.uint8]:
    """e4m3fn codes of ``x * float32(1/scale)``, SATFINITE, NaN -> 0x7F.

    Args:
        x: float32 or bfloat16 array; bfloat16 widens exactly.
        scale: a valid static scale (the caller validates it).
    """
    inv = np.float32(1.0) / np.float32(scale)
    return scan_encode(np.asarray(x).astype(np.float32) * inv, _E4M3FN, _SATFINITE)


def static_scales_shape(rule: ScaleRule, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the scales ``rule`` gives an ``x`` of ``shape``: (), [M] or [M, K/block].

    Raises:
        ValueError: for a per-row or per-block rule on an x that is not [M, K],
            or a K the block does not divide.
    """
    if rule.granularity is Granularity.TENSOR:
        return ()
    if len(shape) != 2:
        raise ValueError(f"{rule.name}: x must be [M, K] for a {rule.granularity.value} scale")
    m, k = shape
    if rule.granularity is Granularity.ROW:
        return (m,)
    assert rule.block is not None
    if k % rule.block:
        raise ValueError(f"{rule.name}: K={k} is not a multiple of the block size {rule.block}")
    return (m, k // rule.block)


def _widen(x: np.ndarray) -> npt.NDArray[np.float32]:
    """float32 or bfloat16 ``x`` as float32, exactly (bfloat16: its 16 bits, shifted up)."""
    arr = np.asarray(x)
    if arr.dtype.itemsize == 2 and arr.dtype.name == "bfloat16":
        return (arr.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(arr, np.float32)


def round_bfloat16(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each float32 rounded to bfloat16 (the top 16 bits), to nearest even; NaN and inf kept.

    Adding ``0x7FFF`` plus the kept lowest bit to the bits and clearing the low
    16 is round-half-to-even on the dropped half-word; a carry into the
    exponent is the next binade (or inf), as it should be.
    """
    bits = np.ascontiguousarray(v, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(v), v, out).astype(np.float32)


def _per_element(scales: np.ndarray, rule: ScaleRule, shape: tuple[int, ...]) -> np.ndarray:
    """The float32 scale of every element of an x of ``shape``.

    Raises:
        ValueError: for scales that are not the rule's shape.
    """
    want = static_scales_shape(rule, shape)
    s = np.asarray(scales, np.float32)
    if rule.granularity is Granularity.TENSOR:
        if s.size != 1:
            raise ValueError(f"{rule.name}: one scale per tensor, got shape {s.shape}")
        return np.full(shape, s.reshape(-1)[0], np.float32)
    if s.shape != want:
        raise ValueError(f"{rule.name}: scales must be {want}, got {s.shape}")
    if rule.granularity is Granularity.ROW:
        return np.repeat(s[:, None], shape[1], axis=1)
    assert rule.block is not None
    return np.repeat(s, rule.block, axis=1)


def _clamp(q: npt.NDArray[np.float32], top: np.float32, clamp: Clamp) -> npt.NDArray[np.float32]:
    nan = np.isnan(q)
    bounded = np.minimum(np.maximum(np.where(nan, 0, q), -top), top).astype(np.float32)
    if clamp is Clamp.MIN_THEN_MAX:  # fmaxf(-M, fminf(q, M)): fminf(NaN, M) = M
        return np.where(nan, top, bounded).astype(np.float32)
    if clamp is Clamp.MAX_THEN_MIN:  # fminf(fmaxf(q, -M), M): fmaxf(NaN, -M) = -M
        return np.where(nan, -top, bounded).astype(np.float32)
    if clamp is Clamp.TORCH:  # NaN passes
        return np.where(nan, q, bounded).astype(np.float32)
    return q


def reference_static_quant(x: np.ndarray, scales: Any, rule: ScaleRule) -> npt.NDArray[np.uint8]:
    """Codes of ``x`` (float32 or bfloat16) under the given-scale ``rule`` and ``scales``.

    Args:
        x: any shape for a per-tensor rule; [M, K] per row or per block.
        scales: one float32 (per tensor), [M] (per row) or [M, K/block].
        rule: a static rule (its amax keys are not read).

    Raises:
        ValueError: for scales or an x of the wrong shape.
    """
    arr = np.asarray(x)
    x32 = _widen(arr)
    s = _per_element(scales, rule, arr.shape)
    elem = get_format(rule.element)
    bf16 = arr.dtype.name == "bfloat16"
    narrow = rule.arithmetic is Arithmetic.INPUT and bf16  # the scale in the input's dtype
    narrow_q = rule.arithmetic is not Arithmetic.FLOAT32 and bf16  # the quotient too
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if narrow:
            s = round_bfloat16(s)
        if rule.apply is Apply.DIVIDE:
            q = x32 / s
        elif rule.apply is Apply.MULTIPLY:
            q = x32 * s
        else:
            q = x32 * (np.float32(1) / s)
        q = np.asarray(q, np.float32)
        if narrow_q:
            q = round_bfloat16(q)
        if rule.signed_zero is SignedZero.PLUS_ZERO:  # -0 + 0 is +0 (IEEE 754 §6.3)
            q = np.where(q == 0, np.float32(0), q).astype(np.float32)
        q = _clamp(q, np.float32(float(elem.max)), rule.clamp)
    if rule.element_rounding is ElementRounding.TIES_AWAY:
        table = ties_away_table(rule.element)
        mids = np.array(sorted(table), np.float32)
        ups = np.array([table[float(m)] for m in mids], np.float32)
        mag = np.abs(q)
        at = np.clip(np.searchsorted(mids, mag), 0, mids.size - 1)
        tie = mids[at] == mag
        q = np.where(tie, np.copysign(ups[at], q), q).astype(np.float32)
    policy = ScanPolicy(saturate=rule.saturate, keep_nan_sign=False)
    return scan_encode(q, elem, policy)
