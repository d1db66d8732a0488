"""jax's dot on float8_e4m3fn (CPU, XLA) as a G3 kernel: the arrays moved in and out.

``dot``: ``lax.dot_general(A, B, contract K, preferred_element_type=float32)``
times s_a, times s_b (per tensor, or [M,1] and [1,N]), jitted; float32 out.

    fp8lab gemm infer --kernel examples.gemm.jax_gemms:dot --write-gemm j.toml
    fp8lab gates --gate G3 --kernel examples.gemm.jax_gemms:dot --gemm-file j.toml
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax


@jax.jit
def _scaled_dot(a: jax.Array, b: jax.Array, s_a: jax.Array, s_b: jax.Array) -> jax.Array:
    acc = lax.dot_general(a, b, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
    return acc * s_a * s_b


def dot(a_codes: np.ndarray, b_codes: np.ndarray, s_a: Any, s_b: Any, out_dtype: str) -> np.ndarray:
    """The scaled fp8 dot, float32 out."""
    a = jnp.asarray(np.array(a_codes, np.uint8).view(ml_dtypes.float8_e4m3fn))
    b = jnp.asarray(np.array(b_codes, np.uint8).view(ml_dtypes.float8_e4m3fn))
    sa, sb = np.array(s_a, np.float32), np.array(s_b, np.float32)
    if sa.ndim:
        sa, sb = sa.reshape(-1, 1), sb.reshape(1, -1)
    return np.asarray(_scaled_dot(a, b, jnp.asarray(sa), jnp.asarray(sb)))
