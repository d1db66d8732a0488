"""The mutation harness judges only kernels whose unmutated build passes.

A kernel that fails a gate unmutated "kills" every mutant of its module, so
the score would count kills the gates never made. And every order of the
GEMM epilogue must be reached by some kernel that G3 checks, or its mutants
survive unseen (the vLLM CUTLASS branch did, for M > 64).
"""

from __future__ import annotations

import pytest

import fp8lab.mutants.runner as runner
from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels.matmul import MATMUL_VARIANTS
from fp8lab.mutants.gemm_mutants import GEMM_BUILDERS
from fp8lab.mutants.quant_mutants import QUANT_BUILDERS

EPILOGUE = "fp8lab.kernels.matmul_epilogue"


def test_a_module_whose_unmutated_kernels_fail_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planted = ("gemm", lambda m: [MATMUL_VARIANTS["upstream_cuda_bf16"]])
    monkeypatch.setitem(runner.SOURCE_MODULES, EPILOGUE, planted)
    with pytest.raises(ValueError, match="unmutated kernel upstream_cuda_bf16 is FAIL under G3"):
        runner.run_source(("G3",), modules=[EPILOGUE])


def test_a_restored_kernel_that_fails_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = GEMM_BUILDERS["ignores_alpha"]()
    monkeypatch.setattr(runner, "_builtin_gemm", lambda: broken)
    with pytest.raises(ValueError, match="restored gemm kernel"):
        runner.run_catalogue(("G3",))


def test_a_restored_quant_kernel_that_fails_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = QUANT_BUILDERS["M1"]()
    monkeypatch.setitem(runner.BUILTIN_KERNELS, "vllm_cpp", broken)
    with pytest.raises(ValueError, match="restored quant kernel"):
        runner.run_catalogue(("G1",))


@pytest.mark.slow
def test_every_epilogue_mutant_is_killed_by_g3() -> None:
    results = runner.run_source(("G3",), modules=[EPILOGUE])
    survivors = [r.id for r in results if r.verdict is not MutantVerdict.KILLED]
    assert results and not survivors
    # The swap_ab cut's own sites (comparison, axis) are killed by the one case
    # either side of it (M = 64, M = 65), so their margins are thin. The bound
    # itself is the spec's (MatmulSpec.swap_max_m), no longer a module constant.
    cutlass_sites = [r for r in results if "swap_max_m" in r.diff or "shape[" in r.diff]
    assert len(cutlass_sites) == 3 and all(r.margin >= 1 for r in cutlass_sites)
