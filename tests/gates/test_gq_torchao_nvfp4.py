"""torchao's NVFP4 quantizer under the rule named after it, and under TransformerEngine's.

With torch and torchao installed (the ``ecosystem`` extra), ``nvfp4_quantize``
passes GQ under ``torchao-0.18-nvfp4`` and fails under ``te-nvfp4-divide``; the
failing record shows where the two part: zero blocks (torchao clamps the block
scale up to 2**-6), NaN blocks (torchao's amax lets a NaN win) and the block
formula (a divisor per-tensor scale). Skipped, with the reason, without them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import needs
from tests.in_process import run_main

pytestmark = [pytest.mark.process, needs("torch", "torchao", extra="ecosystem")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchao"


def _gq(rule: str, out: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    argv = ["--gate", "GQ", "--scheme", "nvfp4", "--rule", rule]
    argv += ["--kernel", "torchao_nvfp4:quantize", "--arrays", "torch", "--json", str(out)]
    done = run_main(["gates", *argv], cwd=EXAMPLE, path=[EXAMPLE])
    (record,) = json.loads(out.read_text())
    return done, record


def test_torchao_nvfp4_passes_its_rule(tmp_path: Path) -> None:
    done, record = _gq("torchao-0.18-nvfp4", tmp_path / "own.json")
    assert done.returncode == 0 and "PASS" in done.stdout, done.stdout + done.stderr
    assert record["status"] == "PASS" and record["mismatches"] == 0
    assert record["rule"] == "torchao-0.18-nvfp4" and record["cases"] == 396


def test_torchao_nvfp4_fails_te_divide_where_the_choices_differ(tmp_path: Path) -> None:
    done, record = _gq("te-nvfp4-divide", tmp_path / "te.json")
    assert done.returncode == 1 and "FAIL" in done.stdout, done.stdout + done.stderr
    by_class = record["mismatches_by_class"]
    assert isinstance(by_class, dict)
    # block clamp to [2**-6, 448]; NaN-winning amax; divisor tensor scale and its quotient
    for word_class in ("zero", "nan", "neg-nan", "nvfp4-formula-split"):
        assert by_class[word_class] > 0, (word_class, by_class)
    assert by_class["random"] == 0  # on ordinary data the two agree here


def test_the_torchao_facts_the_rule_is_read_from() -> None:
    """E4M3_EPS is 2**-6; S = g / 2688; element 2i in the low nibble; an all-zero tensor's NaN."""
    import numpy as np
    import torch
    from torchao.prototype.mx_formats import nvfp4_tensor as nv

    from fp8lab.specs.nvfp4_rules import E4M3_TINY, NVFP4_RULES

    assert nv.E4M3_EPS == E4M3_TINY == 2.0**-6
    assert NVFP4_RULES["torchao-0.18-nvfp4"].block_bounds == (nv.E4M3_EPS, nv.F8E4M3_MAX)
    g = torch.tensor(3.7, dtype=torch.float32)
    want = np.float32(np.float32(3.7) / np.float32(2688.0))
    assert nv.per_tensor_amax_to_scale(g).numpy() == want
    x = torch.zeros(1, 16)
    x[0, 0], x[0, 1] = 6.0, 0.5  # codes 0x7 and 0x1
    scales, packed = nv.nvfp4_quantize(x, 16, nv.per_tensor_amax_to_scale(torch.tensor(6.0)))
    assert packed[0, 0].item() == 0x17 and scales.view(torch.uint8).item() == 0x7E
    zeros = torch.zeros(1, 16)
    scales, packed = nv.nvfp4_quantize(zeros, 16, nv.per_tensor_amax_to_scale(torch.tensor(0.0)))
    assert scales.view(torch.uint8).item() == 0xFF and (packed == 0xCC).all()
