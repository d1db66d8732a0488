"""The gate registry: each record's parts resolve; a new gate is one module and one entry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.kernels import quant_static
from fp8lab.specs.gates import GATES, KERNEL_KINDS, Gate, bundle_gates, load
from fp8lab.testing import assert_gate
from tests.specs import toy_gate


@pytest.mark.parametrize("name", sorted(GATES))
def test_each_record_names_parts_that_exist(name: str) -> None:
    gate = GATES[name]
    assert gate.name == name and gate.kind in KERNEL_KINDS and gate.convention
    for ref in (gate.runner, gate.builtins, gate.bundle, gate.mutants):
        assert not ref or load(ref) is not None, ref
    assert gate.adds


def test_the_mutants_target_the_gates_kinds_and_bundles_are_named() -> None:
    from fp8lab.mutants.catalogue import CATALOGUE

    mutated = {g.kind for g in GATES.values() if g.mutants}
    assert {m.target for m in CATALOGUE} == mutated
    assert bundle_gates() == ("G1", "G3", "GQ")


def test_a_record_with_an_unknown_kind_or_option_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        Gate("GX", "matmul", "", "m:f", "m:b")
    with pytest.raises(ValueError, match="options"):
        Gate("GX", "quant", "", "m:f", "m:b", options=("colour",))


def _zeros(x: np.ndarray, scale: object) -> np.ndarray:
    return np.zeros(x.shape, np.uint8)


@pytest.mark.process
def test_a_new_gate_runs_from_the_command_line_a_bundle_and_assert_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(GATES, "GZ", toy_gate.GATE)  # the one entry
    out = tmp_path / "gz.json"
    assert main(["gates", "--gate", "GZ", "--json", str(out)]) == 0  # the built-in kernels
    assert [r["kernel"] for r in json.loads(out.read_text())] == ["vllm_cpp"]
    assert main(["gates", "--gate", "GZ", "--kernel", f"{__name__}:_zeros"]) == 1  # isolated
    capsys.readouterr()

    bundle = tmp_path / "bundle"
    assert main(["export", "--gate", "GZ", "--out", str(bundle)]) == 0
    assert (bundle / "bundle.txt").read_text().startswith("fp8lab.bundle/1 GZ 1\n254 ")
    x = np.fromfile(bundle / "inputs" / "00.f32", np.float32)
    (bundle / "outputs" / "00.u8").write_bytes(quant_static(x, np.float32(1.0)).tobytes())
    assert main(["gates", "--gate", "GZ", "--outputs", str(bundle)]) == 0
    (bundle / "outputs" / "00.u8").write_bytes(bytes(len(x)))
    assert main(["gates", "--gate", "GZ", "--outputs", str(bundle)]) == 1
    assert "253 codes do not come back"  # all but 0x00 in capsys.readouterr().out

    assert assert_gate("GZ", quant_static).cases == 1
    with pytest.raises(AssertionError, match="GZ _zeros: FAIL"):
        assert_gate("GZ", _zeros)
