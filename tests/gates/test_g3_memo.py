"""G3's remembered expectation: equal to a fresh one, keyed by every input, never writable."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import g3_memo
from fp8lab.gates.g3_memo import remembered_reference
from fp8lab.refs.gemm_exact import seed_reference


def _operands(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 0x7F, (4, 32), dtype=np.uint8)  # positive finite e4m3fn codes
    b = rng.integers(0, 0x7F, (3, 32), dtype=np.uint8)  # [N, K]
    return a, b


def _same(x: object, y: object) -> bool:
    return all(
        np.array_equal(getattr(x, f), getattr(y, f), equal_nan=True)
        for f in ("want", "abs_sum", "tolerance")
    ) and getattr(x, "alpha") == getattr(y, "alpha")  # noqa: B009


def test_it_equals_a_fresh_reference_and_is_computed_once() -> None:
    a, b = _operands(1)
    first = remembered_reference(a, b, 0.5, 0.25, "f32")
    assert _same(first, seed_reference(a, b, 0.5, 0.25, "f32"))
    assert remembered_reference(a.copy(), b.copy(), 0.5, 0.25, "f32") is first
    with pytest.raises(ValueError, match="read-only"):
        first.want[0, 0] = 0.0


@pytest.mark.parametrize("change", ["a code", "a scale", "the output", "a shape"])
def test_any_changed_input_gets_its_own_reference(change: str) -> None:
    a, b = _operands(2)
    base = remembered_reference(a, b, 0.5, 0.25, "f32")
    s_in, out = 0.5, "f32"
    if change == "a code":
        a = a.copy()
        a[3, 31] ^= 1  # one code, one bit
    elif change == "a scale":
        s_in = float(np.nextafter(np.float32(0.5), np.float32(1)))
    elif change == "the output":
        out = "bf16"
    else:
        a, b = a.reshape(8, 16).copy(), b.reshape(6, 16).copy()
    got = remembered_reference(a, b, s_in, 0.25, out)
    assert got is not base and _same(got, seed_reference(a, b, s_in, 0.25, out))


def test_the_keep_most_recently_used_are_kept_and_no_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    computed: list[float] = []

    def counted(a: np.ndarray, b: np.ndarray, s_in: float, s_w: float, *rest: str) -> object:
        computed.append(s_in)
        return seed_reference(a, b, s_in, s_w, *rest)

    monkeypatch.setattr(g3_memo, "seed_reference", counted)
    a, b = _operands(3)
    scales = [1.0 + i / 1024 for i in range(g3_memo.KEEP + 1)]  # one key each
    for s in [*scales[:-1], scales[0], scales[-1]]:  # scales[1] is now the least recent
        remembered_reference(a, b, s, 1.0, "f32")
    assert len(computed) == g3_memo.KEEP + 1 and len(g3_memo.KEPT) == g3_memo.KEEP
    remembered_reference(a, b, scales[0], 1.0, "f32")
    remembered_reference(a, b, scales[1], 1.0, "f32")
    assert computed[g3_memo.KEEP + 1 :] == [scales[1]]
