"""GEMMs written in numpy from a behaviour, not from fp8lab's models: each does one thing.

Every kernel takes ``(a_codes, b_codes, s_a, s_b, out_dtype)``, decodes the
e4m3fn codes with ml_dtypes, and uses numpy's float32 arithmetic (each
operation rounded once), so it shares no code with the model it is held to.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

CASTS = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def _decode(codes: np.ndarray) -> np.ndarray:
    return np.asarray(codes, np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)


def _column(s: Any, size: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(s, np.float32).reshape(-1), (size,)).astype(np.float32)


def product_scaled(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """Per k in order: acc = f32(acc + f32(f32(a*b*s_a)*s_b)); scales per tensor or per row."""
    a, b = _decode(a_codes), _decode(b_codes)
    sa = _column(s_a, a.shape[0])[:, None]
    sb = _column(s_b, b.shape[0])[None, :]
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    with np.errstate(all="ignore"):
        for k in range(a.shape[1]):
            p = np.multiply.outer(a[:, k], b[:, k])  # exact: two fp8 values
            acc = acc + (p * sa) * sb  # float32 throughout: three roundings
    return acc.astype(CASTS[out_dtype])


def _sequential(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each output's products added in k order, float32 (numpy's accumulate is sequential)."""
    with np.errstate(all="ignore"):
        p = a[:, None, :] * b[None, :, :]  # exact: fp8 values
        out: np.ndarray = np.add.accumulate(p, axis=-1, dtype=np.float32)[..., -1]
    return out


def bf16_once(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """A bfloat16 matmul: no scales, float32 sum in order, rounded once to bfloat16."""
    return _sequential(_decode(a_codes), _decode(b_codes)).astype(ml_dtypes.bfloat16)


def f16_blas(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """A float16 matmul: no scales, numpy's float32 matmul (its BLAS's order), then float16."""
    a, b = _decode(a_codes), _decode(b_codes)
    with np.errstate(all="ignore"):
        return (a @ b.T).astype(np.float16)


class FirstCallDifferent:
    """Sums in reverse on its first call, in order on every later one (float32, scales 1)."""

    name = "first_call_different"

    def __init__(self) -> None:
        self.calls = 0

    def matmul(self, a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
        """The sum, reversed on the first call."""
        self.calls += 1
        a, b = _decode(a_codes), _decode(b_codes)
        if self.calls == 1:
            a, b = a[:, ::-1], b[:, ::-1]
        folded = np.float32(np.float32(s_a) * np.float32(s_b))
        return (_sequential(a, b) * folded).astype(CASTS[out_dtype])


first_call_different = FirstCallDifferent()  # one per process: the CLI's kernel child


def by_magnitude(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """Sums each output's products from the smallest magnitude up: a value-dependent order."""
    a, b = _decode(a_codes), _decode(b_codes)
    p = a[:, None, :] * b[None, :, :]
    order = np.argsort(np.abs(p), axis=-1, kind="stable")
    p = np.take_along_axis(p, order, axis=-1)
    acc = np.zeros(p.shape[:2], np.float32)
    with np.errstate(all="ignore"):
        for k in range(p.shape[-1]):
            acc = acc + p[..., k]
    folded = np.float32(np.float32(s_a) * np.float32(s_b))
    return (acc * folded).astype(CASTS[out_dtype])


def reversed_if_negative(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """In order, except reversed at the outputs whose first product is negative."""
    a, b = _decode(a_codes), _decode(b_codes)
    ahead = _sequential(a, b)
    back = _sequential(a[:, ::-1], b[:, ::-1])
    first = np.multiply.outer(a[:, 0], b[:, 0])
    folded = np.float32(np.float32(s_a) * np.float32(s_b))
    return (np.where(first < 0, back, ahead) * folded).astype(CASTS[out_dtype])


def bf16_per_add(a_codes, b_codes, s_a, s_b, out_dtype):  # type: ignore[no-untyped-def]
    """A bfloat16 accumulator: no scales, every add rounded to bfloat16, in order."""
    a, b = _decode(a_codes), _decode(b_codes)
    acc = np.zeros((a.shape[0], b.shape[0]), ml_dtypes.bfloat16)
    for k in range(a.shape[1]):
        p = np.multiply.outer(a[:, k], b[:, k])  # exact, and each p is a bfloat16 value
        acc = (acc.astype(np.float32) + p).astype(ml_dtypes.bfloat16)  # 24 >= 2*8+2 bits
    return acc
