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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fp8lab.order.grid import GridProbe
from fp8lab.order.positions import PositionClass
from fp8lab.order.probe import F32MatmulProbe, SumProbe
from fp8lab.order.run import tree_matmul
from fp8lab.refs.gemm_declared import round_to, tree_rounded
from fp8lab.refs.gemm_model import decode_e4m3fn
from fp8lab.runtime.guard import call_kernel

__all__ = ["NAN_FREE_CODES", "ROUNDINGS", "Reproduction", "fp8_codes", "reproduce"]

NAN_FREE_CODES = 0x7F  # draw magnitudes below 0x7F and give them a random sign: no NaN


ROUNDINGS = {  # what an output of each type may have been formed by, tried in this order
    "f32": (("float32", "once"), ("bfloat16", "once"), ("float16", "once")),
    "bf16": (("bfloat16", "once"), ("bfloat16", "per-add")),
    "f16": (("float16", "once"), ("float16", "per-add")),
}


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
        output_rounding: the output rounding the models reproduced with
            (``float32 once``, ``bfloat16 once``, ``float16 per-add``, ...),
            the first of :data:`ROUNDINGS` that reproduces every output; ""
            when none does.
        first_miss: where the first candidate missed: ``{"draw", "output",
            "got", "want"}`` (empty when it reproduced).
        first_repeat: the first output whose two calls differed (``{"draw", "output"}``).
    """

    outputs_checked: int
    outputs_reproduced: int
    outputs_unchecked: int
    repeat_differs: int
    calls: int
    draws: int
    output_rounding: str = "float32 once"
    first_miss: dict[str, Any] = field(default_factory=dict)
    first_repeat: dict[str, Any] = field(default_factory=dict)


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
        got = call_kernel(p.kernel.matmul, a_codes, b_codes, 1.0, 1.0, p.out)
    out = np.ascontiguousarray(np.asarray(got, np.float32).reshape(probe.shape))
    return out.view(np.uint32)


def _model(cls: PositionClass, a: np.ndarray, b: np.ndarray, rounding: tuple[str, str]) -> Any:
    """The class's outputs (in its order) from its tree, as float32 bits."""
    if cls.tree is None:
        raise ValueError("a class without a tree has no model")
    rows = sorted({r for r, _ in cls.outputs})
    cols = sorted({c for _, c in cls.outputs})
    output, how = rounding
    if how == "per-add":
        sub = tree_rounded(cls.tree.nodes, a[rows], b[cols], output)
    else:
        sub = round_to(tree_matmul(cls.tree, a[rows], b[cols]), output)
    at_r = {r: i for i, r in enumerate(rows)}
    at_c = {c: i for i, c in enumerate(cols)}
    picked = [sub[at_r[r], at_c[c]] for r, c in cls.outputs]
    return np.asarray(picked, np.float32).view(np.uint32)


def _draws(grid: GridProbe, seed: int, draws: int) -> list[tuple[np.ndarray, np.ndarray]]:
    m, n = grid.shape
    k = grid.probe.k
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(draws):
        a_codes = fp8_codes(rng, (m, k))
        b_codes = fp8_codes(rng, (n, k)) if not isinstance(grid.probe, SumProbe) else None
        out.append((a_codes, np.full((1, k), 0x38, np.uint8) if b_codes is None else b_codes))
    return out  # 0x38: 1.0, B of a sum


def reproduce(
    grid: GridProbe, classes: Sequence[PositionClass], seed: int, draws: int = 2
) -> Reproduction:
    """Compare every class's model with the kernel on ``draws`` seeded operand draws.

    Each output rounding the kernel's out type allows (:data:`ROUNDINGS`) is
    tried in order; the first that reproduces every output is kept.

    Raises:
        KernelFaultError: when the kernel raises.
    """
    runnable = [c for c in classes if c.tree is not None and c.tree.max_fan_in() <= 2]
    unchecked = sum(len(c.outputs) for c in classes if c not in runnable)
    operands = _draws(grid, seed, draws)
    got = [_run(grid, a, b) for a, b in operands]
    again = _run(grid, *operands[0])
    changed = np.argwhere(again != got[0])
    first_repeat = {"draw": 0, "output": [int(v) for v in changed[0]]} if len(changed) else {}
    decoded = [(decode_e4m3fn(a), decode_e4m3fn(b)) for a, b in operands]
    out = getattr(grid.probe, "out", "f32")
    tried: list[tuple[int, str, dict[str, Any]]] = []
    for rounding in (
        ROUNDINGS[out] if not isinstance(grid.probe, SumProbe) else ROUNDINGS["f32"][:1]
    ):
        checked = same = 0
        miss: dict[str, Any] = {}
        for d, ((a, b), bits) in enumerate(zip(decoded, got, strict=True)):
            for cls in runnable:
                want = np.array([bits[p] for p in cls.outputs], np.uint32)
                model = _model(cls, a, b, rounding)
                checked += want.size
                same += int(np.sum(model == want))
                bad = np.flatnonzero(model != want)
                if len(bad) and not miss:
                    i = int(bad[0])
                    got_i, want_i = f"0x{int(want[i]):08x}", f"0x{int(model[i]):08x}"
                    miss = {"draw": d, "output": list(cls.outputs[i]), "got": got_i,
                            "want": want_i}  # fmt: skip
        tried.append((same, " ".join(rounding), miss))
        if same == checked:
            break
    same, name, miss = tried[-1] if tried[-1][0] == checked else tried[0]
    return Reproduction(
        checked, same, unchecked, len(changed), draws + 1, draws,
        name if same == checked else "", miss, first_repeat,
    )  # fmt: skip
