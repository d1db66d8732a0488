from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import fp8lab.kernels.f32tofp8 as f32tofp8_module
from fp8lab.cli.main import main
from fp8lab.gates import run_g1
from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels import BUILTIN_KERNELS, FunctionKernel, quant_static
from fp8lab.mutants.catalogue import CATALOGUE, SEED_NOTES, SEED_TABLE
from fp8lab.mutants.harness import MutantResult, judge
from fp8lab.mutants.quant_mutants import QUANT_BUILDERS
from fp8lab.mutants.report import check_equivalent, mutation_report
from fp8lab.mutants.runner import gate_runners, load_equivalents, run_catalogue
from fp8lab.mutants.source import load_mutant, source_mutations
from fp8lab.populations import g1_population

RUNNERS = gate_runners(["G1"])
BASELINE = {"G1": 16}


def judged(build: object) -> MutantResult:
    return judge("t", "test", "quant", build, RUNNERS, BASELINE)  # type: ignore[arg-type]


def test_a_no_op_mutant_survives() -> None:
    result = judged(lambda: FunctionKernel("noop", quant_static))
    assert result.verdict is MutantVerdict.SURVIVED
    assert result.failed_assertions == 0 and result.assertions == 96


def test_a_mutant_that_cannot_be_built_is_incompetent() -> None:
    def broken_import() -> object:
        raise ImportError("mutant module failed to import")

    result = judged(broken_import)
    assert result.verdict is MutantVerdict.INCOMPETENT and not result.built
    assert "ImportError" in result.build_error


def test_m0_is_killed_never_passed() -> None:
    result = judged(QUANT_BUILDERS["M0"])
    assert result.verdict is MutantVerdict.KILLED
    assert result.failed_assertions == result.assertions == 96
    assert result.killed_by == ("G1",)


def test_thin_margins_are_flagged() -> None:
    result = judge("M2", "divide", "quant", QUANT_BUILDERS["M2"], RUNNERS, BASELINE, threshold=9)
    assert result.verdict is MutantVerdict.KILLED and result.margin == 8 and result.thin


def test_no_applicable_gate_is_an_error() -> None:
    with pytest.raises(ValueError, match="no gate"):
        judge("x", "x", "gemm", lambda: None, RUNNERS, BASELINE)
    with pytest.raises(ValueError, match="gates"):
        gate_runners(["G2"])


def test_every_gemm_mutant_changes_behaviour() -> None:
    from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
    from fp8lab.mutants.gemm_mutants import GEMM_BUILDERS
    from fp8lab.populations.gemm import SEED_CASES, g3_operands

    a, b = g3_operands(SEED_CASES[0])
    b[0, 0] = 0x7F  # a NaN code in B row 0, for the mutant that decodes it as 480
    want = BUILTIN_MATMUL_KERNELS["vllm_cpp"].matmul(a, b, 0.035, 0.017, "f32")
    for name, build in GEMM_BUILDERS.items():
        with np.errstate(all="ignore"):
            got = build().matmul(a, b, 0.035, 0.017, "f32")
        assert not np.array_equal(got, want, equal_nan=True), name


# M0 has no behaviour to compare (it raises); test_m0_is_killed_never_passed covers it.
BEHAVING = [m for m in CATALOGUE if m.target == "quant" and m.id != "M0"]


@pytest.mark.parametrize("spec", BEHAVING, ids=lambda m: m.id)
def test_every_catalogue_mutant_changes_behaviour(spec: object) -> None:
    kernel = QUANT_BUILDERS[spec.build]()  # type: ignore[attr-defined]
    words = g1_population(0.13).words
    shards = np.array([0.05, 0.13], np.float32)  # collapsed with max: 0.13 (K12 takes 0.05)
    with np.errstate(all="ignore"):
        assert not np.array_equal(
            kernel.quantize(words, shards), BUILTIN_KERNELS["vllm_cpp"].quantize(words, 0.13)
        )


@pytest.mark.slow
def test_catalogue_is_killed_with_margin_and_strengthening_is_recorded() -> None:
    after = {r.id: r for r in run_catalogue(["G1", "G3"])}
    assert {"M5a", "M5b", "K16"} <= set(after)
    assert all(r.verdict is MutantVerdict.KILLED and r.margin >= 3 for r in after.values())
    before = {r.id: r for r in run_catalogue(["G1"], special_words=False)}
    survived_before = {k for k, r in before.items() if r.verdict is MutantVerdict.SURVIVED}
    assert survived_before == {"K03", "K04", "K12"}  # NaN policy; the shard case
    assert set(SEED_TABLE) >= {"M0", "M1", "M2", "M3", "M4"} and set(SEED_NOTES) == set(SEED_TABLE)


def test_source_mutants_load_in_isolation() -> None:
    path = Path(f32tofp8_module.__file__)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    mutations = source_mutations("fp8lab.kernels.f32tofp8")
    assert len(mutations) > 30 and len({m.key for m in mutations}) == len(mutations)
    flip = next(m for m in mutations if m.operator == "swap_mul_div")
    mutant = load_mutant(flip)
    assert mutant.f32_to_fp8 is not f32tofp8_module.f32_to_fp8
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert run_g1(BUILTIN_KERNELS["f32tofp8"]).status.value == "PASS"


def test_equivalents_are_current_and_rechecked() -> None:
    equivalents = load_equivalents()
    assert len(equivalents) >= 20
    assert all(e.reason for e in equivalents.values())
    key = "fp8lab.kernels.f32tofp8:drop_call_statement:4"
    assert check_equivalent(key, equivalents[key], exhaustive=False) > 100_000  # probes only


@pytest.mark.process
def test_mutate_cli_json_has_the_fixed_fields(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    # GQ and GF (in the default) are run through the CLI in test_scheme_chain_mutants.py.
    assert main(["mutate", "--gate", "G1,G3", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    entry = data["entries"][0]
    for name in ("id", "verdict", "failed_assertions", "assertions", "moved_words", "killed_by"):
        assert name in entry
    assert {e["id"] for e in data["entries"]} >= {"M0", "M1", "M2", "M3", "M4", "M5a", "M5b"}
    assert data["min_margin"] >= 3
    assert main(["mutate", "--gates", "G2"]) == 2


def test_report_refuses_to_run_nothing() -> None:
    with pytest.raises(ValueError, match="nothing to run"):
        mutation_report(catalogue=False, source=False)
