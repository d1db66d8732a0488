"""The scale-rule (GQ) and fused-chain (GF) catalogue mutants: each KILLED with margin >= 3.

Every listed scale-rule and fused-chain bug class has a catalogue entry,
each a patch of the production port that the gate passes unmutated, and each
is killed by its gate with at least 3 failed assertions.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import build_parser, main
from fp8lab.gates.records import MutantVerdict
from fp8lab.kernels import chain as chain_ports_module
from fp8lab.kernels import scheme as scheme_port_module
from fp8lab.mutants.catalogue import CATALOGUE
from fp8lab.mutants.chain_mutants import CHAIN_MUTANTS
from fp8lab.mutants.harness import MutantResult
from fp8lab.mutants.runner import run_catalogue
from fp8lab.mutants.scheme_mutants import SCHEME_MUTANTS

NEW = [m for m in CATALOGUE if m.target in ("scheme", "chain")]
GATE = {"scheme": "GQ", "chain": "GF"}


def _hashes() -> list[str]:
    files = (scheme_port_module.__file__, chain_ports_module.__file__)
    return [hashlib.sha256(Path(f or "").read_bytes()).hexdigest() for f in files]


@pytest.fixture(scope="module")
def judged() -> dict[str, MutantResult]:
    before = _hashes()
    results = {r.id: r for r in run_catalogue(("GQ", "GF"))}
    assert _hashes() == before  # the ports' source files were never edited
    return results


def test_the_catalogue_names_every_builder_once() -> None:
    scheme = sorted(m.build for m in NEW if m.target == "scheme")
    chain = sorted(m.build for m in NEW if m.target == "chain")
    # the scale-rule bug classes: 11 classes, e8m0 x2 (Q01-Q12), torchao's e8m0
    # special values (Q13-Q15), element ties (Q20), element arithmetic dtype (Q21),
    # torchao's float32 log2 e8m0 exponent (Q22), the NaN code's sign (Q23), a float32 scale
    # over a bfloat16 quotient (Q24), a NaN amax's zero byte (Q25), a lane-wise amax (Q26);
    # nvfp4's 15 (N01-N15)
    assert scheme == sorted(SCHEME_MUTANTS) and len(scheme) == 37
    assert chain == sorted(CHAIN_MUTANTS) and len(chain) == 6  # the fused-chain bug classes: 6


@pytest.mark.slow  # the catalogue run: GQ and GF on every subject, exact references
def test_only_the_new_targets_run_under_gq_and_gf(judged: dict[str, MutantResult]) -> None:
    assert set(judged) == {m.id for m in NEW}


@pytest.mark.slow  # the catalogue run: GQ and GF on every subject, exact references
@pytest.mark.parametrize("spec", NEW, ids=lambda m: m.id)
def test_killed_with_margin_by_its_gate(spec: object, judged: dict[str, MutantResult]) -> None:
    result = judged[spec.id]  # type: ignore[attr-defined]
    assert result.built and result.verdict is MutantVerdict.KILLED, result.build_error
    assert result.margin >= 3 and not result.thin
    assert result.killed_by == (GATE[spec.target],)  # type: ignore[attr-defined]
    assert result.moved_words > 0 and not result.case_count_changed
    # the patch is on record, a patch of the port of its target (scheme or chain)
    assert result.diff.startswith(f"--- fp8lab.kernels.{spec.target}")  # type: ignore[attr-defined]
    assert "\n+" in result.diff


@pytest.mark.slow  # the catalogue run: GQ and GF on every subject, exact references
def test_the_published_margins(judged: dict[str, MutantResult]) -> None:
    """README "Mutation" table: failed / run assertions (seeded populations, deterministic)."""
    got = {k: (r.failed_assertions, r.assertions) for k, r in judged.items()}
    assert got == {
        "Q01": (22, 42),
        "Q02": (40, 42),
        "Q03": (13, 42),
        "Q04": (9, 42),
        "Q05": (35, 42),
        "Q06": (24, 84),
        "Q07": (4, 84),
        "Q08": (35, 268),
        "Q09": (35, 42),
        "Q10": (33, 353),
        "Q11": (26, 353),
        "Q12": (271, 307),
        "Q13": (12, 42),
        "Q14": (10, 84),
        "Q15": (6, 42),
        "Q20": (22, 42),
        "Q21": (12, 42),
        "Q22": (7, 42),
        "Q23": (4, 84),
        "Q24": (83, 267),
        "Q25": (12, 42),
        "Q26": (6, 42),
        "N01": (117, 396),
        "N02": (346, 396),
        "N03": (56, 396),
        "N04": (112, 396),
        "N05": (30, 396),
        "N06": (16, 396),
        "N07": (28, 396),
        "N08": (6, 396),
        "N09": (11, 396),
        "N10": (17, 396),
        "N11": (52, 396),
        "N12": (32, 396),
        "N13": (18, 396),
        "N14": (16, 396),
        "N15": (36, 396),
        "C01": (36, 80),
        "C02": (60, 80),
        "C03": (24, 80),
        "C04": (56, 56),
        "C05": (19, 33),
        "C06": (58, 80),
    }


@pytest.mark.slow
def test_chain_mutants_are_killed_on_bytes_alone() -> None:
    """Without the port's ``trace`` GF sees codes and residuals only: still >= 4 failed each."""
    from fp8lab.mutants.chain_mutants import CHAIN_BUILDERS, ChainSubject, gf_runner

    failed = {}
    for name, build in CHAIN_BUILDERS.items():
        subject = build()
        bare = ChainSubject(name, subject.chain, subject.recipe, partial(_untraced, subject.kernel))
        failed[name] = gf_runner(bare).assertions_failed
    assert min(failed.values()) >= 4, failed


def _untraced(kernel: Any, *args: Any) -> Any:
    return kernel(*args)


def test_a_scheme_mutant_is_the_port_with_its_edit() -> None:
    """Q08 is the port's clamp swapped: NaN goes to -448 (0xFE), and nothing else moves."""
    from fp8lab.mutants.scheme_mutants import SCHEME_BUILDERS

    (subject,) = SCHEME_BUILDERS["clamp_order_swapped"]()
    x = np.array([[1.0, np.nan, -3.0, 0.5]], np.float32)
    codes, scales = subject.func(x)
    want_codes, want_scales = scheme_port_module.scheme_quant(x, "vllm-per-tensor")
    assert codes[0, 1] == 0xFE and want_codes[0, 1] == 0x7E
    assert np.array_equal(np.delete(codes, 1), np.delete(want_codes, 1))
    assert scales.tobytes() == want_scales.tobytes()


@pytest.mark.slow
def test_mutate_runs_the_chain_catalogue_by_default_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fp8lab mutate --gate GF`` judges C01-C06; the default ``--gate`` includes GQ and GF."""
    out = tmp_path / "m.json"
    assert main(["mutate", "--gate", "GF", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [e["id"] for e in data["entries"]] == [f"C0{i}" for i in range(1, 7)]
    assert data["min_margin"] >= 3 and data["before_strengthening"] == []
    assert "C04" in capsys.readouterr().out
    assert build_parser().parse_args(["mutate"]).gates == "G1,G3,GQ,GF"
