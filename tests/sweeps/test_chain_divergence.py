"""Divergence counts between recipes and ``fp8lab chains``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.sweeps.chain_divergence import divergence

CUDA = "vllm-cuda-fused-add-rmsnorm-static-fp8"
NATIVE = "vllm-native-rmsnorm-fp8"


def test_a_recipe_does_not_diverge_from_itself() -> None:
    rows = divergence(NATIVE, NATIVE)
    assert rows and all(r.bytes_differ == r.prequant_differ == 0 for r in rows)
    assert sum(r.words for r in rows) > 0


def test_the_residual_rounding_divergence_shows_on_residual_ties_and_is_symmetric() -> None:
    ab = {r.kind: r for r in divergence(CUDA, NATIVE)}
    ba = {r.kind: r for r in divergence(NATIVE, CUDA)}
    assert ab == ba
    assert ab["residual-tie"].prequant_differ > 0 and ab["realistic-wide"].bytes_differ > 0
    assert ab["e4m3-tie"].bytes_differ == 0  # no residual sum to round there


def test_recipes_of_two_chains_cannot_be_compared() -> None:
    with pytest.raises(ValueError, match="silu-mul"):
        divergence(CUDA, "vllm-cuda-silu-and-mul-quant-fp8")
    with pytest.raises(ValueError, match="unknown recipe"):
        divergence(CUDA, "nope")
    # A Gemma recipe weights by w + 1: another function, so no divergence to count.
    with pytest.raises(ValueError, match="different functions"):
        divergence("vllm-cpp-standalone-gemma-rmsnorm-fp8", CUDA)


def test_chains_command_lists_recipes_and_writes_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chains"]) == 0
    assert "vllm-cpp-standalone-rmsnorm-gated-fp8 (rmsnorm-gated)" in capsys.readouterr().out
    path = tmp_path / "d.json"
    assert main(["chains", "--diverge", f"{CUDA},{NATIVE}", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["a"] == CUDA and {r["kind"] for r in data["rows"]} >= {"realistic-wide"}


GEMMA = "vllm-cpp-standalone-gemma-rmsnorm-fp8"


@pytest.mark.parametrize(
    "value", ["only-one", f"{CUDA},nope", f"{CUDA},expf-silu-mul-fp8", f"{GEMMA},{CUDA}"]
)
def test_chains_bad_input_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chains", "--diverge", value]) == 2
    assert "Traceback" not in capsys.readouterr().err
