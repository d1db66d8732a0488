"""The epilogue-order cost study: every order within one ulp of scaling exactly, counted."""

from __future__ import annotations

from fp8lab.refs.gemm_model import ACC_EPILOGUES, INTERMEDIATES
from fp8lab.studies.order_epilogue_cost import epilogue_order_cost


def test_every_order_and_intermediate_is_measured() -> None:
    rows = epilogue_order_cost([(4, 32, 64)], [(0.035, 0.017), (1.0, 1.0)], seed=3)
    assert [(r.epilogue, r.intermediate) for r in rows] == [
        (e, i) for e in ACC_EPILOGUES for i in INTERMEDIATES
    ]
    by = {(r.epilogue, r.intermediate): r for r in rows}
    assert all(r.outputs == 2 * 4 * 32 for r in rows)
    assert all(r.max_ulps <= 1 for r in rows)  # at most one ulp off RN(s_in·s_w·acc)
    assert by["folded", "f32"].off_exact > 0  # alpha's own rounding shows up
    swapped, cutlass = by["two_scalar_swapped", "f32"], by["vllm_cutlass", "f32"]
    assert (cutlass.off_exact, cutlass.mean_ulps) == (swapped.off_exact, swapped.mean_ulps)
    # no intermediate rounding: G3's one-rounding path equals the Fraction one everywhere
    assert all(by[e, "exact"].off_exact == 0 for e in ACC_EPILOGUES)
