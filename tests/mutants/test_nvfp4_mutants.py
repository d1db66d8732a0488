"""The nvfp4 catalogue mutants (N01-N15): each a patch of the NVFP4 port that GQ kills.

Their verdicts (KILLED by GQ alone, margin at least 3, not thin, words moved,
the patch on record) and their published margins are asserted with the rest of
the GQ and GF catalogue in ``test_scheme_chain_mutants.py``, from its one run.
"""

from __future__ import annotations

import numpy as np

from fp8lab.kernels.scheme import nvfp4_quant
from fp8lab.mutants.catalogue import CATALOGUE
from fp8lab.mutants.scheme_mutants import NVFP4_MUTANTS, SCHEME_BUILDERS

NVFP4 = [m for m in CATALOGUE if m.build in NVFP4_MUTANTS]
F32 = np.float32


def test_every_nvfp4_mutant_has_one_catalogue_entry_gated_under_nvfp4() -> None:
    assert sorted(m.build for m in NVFP4) == sorted(NVFP4_MUTANTS)
    assert [m.id for m in NVFP4] == [f"N{i:02d}" for i in range(1, 16)]
    assert {s for m in NVFP4_MUTANTS.values() for s, _ in m.gated_as} == {"nvfp4"}
    rules = {r for m in NVFP4_MUTANTS.values() for _, r in m.gated_as}
    assert rules == {
        "te-nvfp4-divide",
        "te-nvfp4-reciprocal",
        "te-nvfp4-fused",
        "torchao-0.18-nvfp4",
    }


def test_an_nvfp4_mutant_is_the_port_with_its_edit() -> None:
    """N07 drops the element multiplier's FLT_MAX clamp: a zero block's zeros become NaN, +6."""
    (subject,) = SCHEME_BUILDERS["nvfp4_inverse_unclamped"]()
    x = np.array([[3.0] * 16, [0.0] * 16], F32)
    g = np.array([3.0], F32)
    codes, scales = subject.func(x, g)
    want_codes, want_scales = nvfp4_quant(x, g, "te-nvfp4-divide")
    assert scales.tobytes() == want_scales.tobytes() and scales[1, 0] == 0
    assert (codes[1] == 0x07).all() and not want_codes[1].any()
    assert np.array_equal(codes[0], want_codes[0])


def test_a_torchao_mutant_flips_one_choice() -> None:
    """N12 floors the block scale at 2**-9: a zero block's byte is 0x01, torchao's 0x08."""
    (subject,) = SCHEME_BUILDERS["nvfp4_floor_subnormal"]()
    x = np.array([[3.0] * 16, [0.0] * 16], F32)
    g = np.array([3.0], F32)
    codes, scales = subject.func(x, g)
    want_codes, want_scales = nvfp4_quant(x, g, "torchao-0.18-nvfp4")
    assert want_scales[1, 0] == 0x08 and scales[1, 0] == 0x01
    assert scales[0, 0] == want_scales[0, 0] and np.array_equal(codes, want_codes)
