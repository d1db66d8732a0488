"""Each GQ scheme's layout, as data: granularity, block, scale format, and the scales' shape.

GQ fixes the signature ``FUNC(x) -> (codes, scales)``: scales are
float32 ``[1]`` (per-tensor), ``[M]`` (per-token), ``[M, K/128]`` (per-group),
e8m0 bytes ``[M, K/32]`` (mxfp8) and e4m3fn bytes ``[M, K/16]`` (nvfp4). The
gate, the shared-library loader and the bundles read it from here; the
references derive their own shapes from their rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lab.specs.scale_rules import Granularity

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SCHEME_LAYOUTS", "scales_dtype", "scales_shape"]

# scheme -> (granularity, block, scale format)
SCHEME_LAYOUTS: dict[str, tuple[Granularity, int | None, str]] = {
    "per-tensor": (Granularity.TENSOR, None, "float32"),
    "per-token": (Granularity.ROW, None, "float32"),
    "per-group": (Granularity.BLOCK, 128, "float32"),
    "mxfp8": (Granularity.BLOCK, 32, "e8m0fnu"),
    "nvfp4": (Granularity.BLOCK, 16, "e4m3fn"),
}


def scales_shape(scheme: str, m: int, k: int) -> tuple[int, ...]:
    """The shape of ``scheme``'s scales for an ``[m, k]`` input.

    Raises:
        KeyError: for an unknown scheme.
        ValueError: if ``k`` is not a multiple of the scheme's block.
    """
    granularity, block, _ = SCHEME_LAYOUTS[scheme]
    if granularity is Granularity.TENSOR:
        return (1,)
    if granularity is Granularity.ROW:
        return (m,)
    assert block is not None
    if k % block:
        raise ValueError(f"{scheme}: K={k} is not a multiple of its block size {block}")
    return (m, k // block)


def scales_dtype(scheme: str) -> np.dtype[Any]:
    """float32 scales stay float32; e8m0 and e4m3 scale bytes travel as uint8."""
    import numpy as np  # imported here: the specs load with the standard library alone

    return np.dtype(np.float32 if SCHEME_LAYOUTS[scheme][2] == "float32" else np.uint8)
