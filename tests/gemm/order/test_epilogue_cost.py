"""The epilogue-order cost study: every order within one ulp of scaling exactly, counted."""

from __future__ import annotations

from fp8lab.gemm.order.epilogue_cost import epilogue_order_cost
from fp8lab.refs.gemm_model import ACC_EPILOGUES


def test_every_order_is_measured_and_within_two_roundings() -> None:
    rows = epilogue_order_cost([(4, 32, 64)], [(0.035, 0.017), (1.0, 1.0)], seed=3)
    assert [r.epilogue for r in rows] == list(ACC_EPILOGUES)
    by = {r.epilogue: r for r in rows}
    assert all(r.outputs == 2 * 4 * 32 for r in rows)
    assert all(r.max_ulps <= 1 for r in rows)  # at most one ulp off RN(s_in·s_w·acc)
    assert by["folded"].off_exact > 0  # alpha's own rounding shows up
    swapped, cutlass = by["two_scalar_swapped"], by["vllm_cutlass"]
    assert (cutlass.off_exact, cutlass.mean_ulps) == (swapped.off_exact, swapped.mean_ulps)
