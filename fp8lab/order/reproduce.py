"""Run inferred position classes as float32 models against the kernel, bit for bit.

The probes only ever see masks and units. Here each class's tree is run as
a float32 accumulator (:func:`~fp8lab.order.run.tree_matmul`) on fresh
seeded fp8 operands, which are not probes (e4m3fn values without NaN, so
every product is exact in float32 and only the order can differ), and every
output of every class is compared with the kernel's bits. The first draw is
also run twice: a kernel whose two calls on the same operands differ has no
fixed order. Each probe kind is called as it is probed: a sum on one vector,
an f32 matmul on decoded values, an fp8 matmul on the codes (scales 1, f32
output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fp8lab.order.grid import GridProbe
from fp8lab.order.positions import PositionClass
from fp8lab.order.probe import F32MatmulProbe, SumProbe
from fp8lab.order.run import tree_matmul
from fp8lab.refs.gemm_model import decode_e4m3fn
from fp8lab.runtime.guard import call_kernel

__all__ = ["NAN_FREE_CODES", "Reproduction", "fp8_codes", "reproduce"]

NAN_FREE_CODES = 0x7F  # draw magnitudes below 0x7F and give them a random sign: no NaN


@dataclass(frozen=True)
class Reproduction:
    """What the model run found.

    Attributes:
        outputs_checked: outputs compared (over every draw).
        outputs_reproduced: of those, outputs whose bits equal the kernel's.
        outputs_unchecked: outputs of classes with no float32 model (a fused
            node, or no tree), per draw.
        repeat_differs: outputs whose two calls on the same operands differed.
        calls: kernel calls made.
        draws: operand draws.
    """

    outputs_checked: int
    outputs_reproduced: int
    outputs_unchecked: int
    repeat_differs: int
    calls: int
    draws: int


def fp8_codes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Seeded e4m3fn codes without NaN: magnitude codes below 0x7F, random signs."""
    codes = rng.integers(0, NAN_FREE_CODES, shape, dtype=np.uint8)
    return codes | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)


def _run(probe: GridProbe, a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    p = probe.probe
    if isinstance(p, SumProbe):
        got = call_kernel(p.func, decode_e4m3fn(a_codes)[0])
    elif isinstance(p, F32MatmulProbe):
        got = call_kernel(p.func, decode_e4m3fn(a_codes), decode_e4m3fn(b_codes))
    else:
        got = call_kernel(p.kernel.matmul, a_codes, b_codes, 1.0, 1.0, "f32")
    out = np.ascontiguousarray(np.asarray(got, np.float32).reshape(probe.shape))
    return out.view(np.uint32)


def _model(cls: PositionClass, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The class's outputs (in its order) from its tree, as float32 bits."""
    if cls.tree is None:
        raise ValueError("a class without a tree has no model")
    rows = sorted({r for r, _ in cls.outputs})
    cols = sorted({c for _, c in cls.outputs})
    sub = tree_matmul(cls.tree, a[rows], b[cols])
    at_r = {r: i for i, r in enumerate(rows)}
    at_c = {c: i for i, c in enumerate(cols)}
    picked = [sub[at_r[r], at_c[c]] for r, c in cls.outputs]
    return np.asarray(picked, np.float32).view(np.uint32)


def reproduce(
    grid: GridProbe, classes: Sequence[PositionClass], seed: int, draws: int = 2
) -> Reproduction:
    """Compare every class's model with the kernel on ``draws`` seeded operand draws.

    Raises:
        KernelFaultError: when the kernel raises.
    """
    m, n = grid.shape
    k = grid.probe.k
    rng = np.random.default_rng(seed)
    runnable = [c for c in classes if c.tree is not None and c.tree.max_fan_in() <= 2]
    unchecked = sum(len(c.outputs) for c in classes if c not in runnable)
    checked = same = differs = calls = 0
    for draw in range(draws):
        a_codes = fp8_codes(rng, (m, k))
        b_codes = fp8_codes(rng, (n, k)) if not isinstance(grid.probe, SumProbe) else None
        b_codes = np.full((1, k), 0x38, np.uint8) if b_codes is None else b_codes  # 0x38: 1.0
        got = _run(grid, a_codes, b_codes)
        calls += 1
        if draw == 0:
            again = _run(grid, a_codes, b_codes)
            calls += 1
            differs = int(np.sum(again != got))
        a, b = decode_e4m3fn(a_codes), decode_e4m3fn(b_codes)
        for cls in runnable:
            want = np.array([got[p] for p in cls.outputs], np.uint32)
            checked += want.size
            same += int(np.sum(_model(cls, a, b) == want))
    return Reproduction(checked, same, unchecked, differs, calls, draws)
