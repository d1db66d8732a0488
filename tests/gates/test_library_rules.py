"""torchao's float8 and MXFP8 and compressed-tensors' FP8 quantizers as black boxes, under rules.

Each quantizer (``examples/torchao``, ``examples/compressed_tensors``) is called
on GQ's population once, in a child process with ``--arrays torch`` as the
commands call it (``KernelHost``; the recording is shared by this module's
tests). On those outputs it passes GQ under its own rule and fails under the
spec rule of its scheme, and ``rules infer`` names its own rule's declaration.
The commands themselves run once: ``fp8lab gates`` (PASS exit 0, FAIL exit 1)
and ``fp8lab rules infer``. Skipped, with the reason, without the ``ecosystem`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from fp8lab.gates.gq import GqCall, gq_calls, run_gq
from fp8lab.gates.records import GateStatus
from fp8lab.gates.rule_inference import Outputs, infer_rule, record_outputs
from fp8lab.kernels.sources.isolated import KernelHost
from fp8lab.specs.scale_rules import RULES
from tests.conftest import needs
from tests.in_process import run_main

pytestmark = [
    pytest.mark.process,
    pytest.mark.slow,
    needs("torch", "torchao", "compressed_tensors", extra="ecosystem"),
]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# (example folder, scheme, kernel, its own rule, the spec rule it departs from)
LIBRARIES = [
    ("torchao", "per-tensor", "torchao_float8:tensorwise", "torchao-0.18-float8-tensorwise",
     "vllm-per-tensor"),
    ("torchao", "per-token", "torchao_float8:rowwise", "torchao-0.18-float8-rowwise",
     "vllm-native-per-token"),
    ("torchao", "mxfp8", "torchao_mxfp8:floor", "torchao-0.18-mxfp8-floor", "ocp-floor"),
    ("torchao", "mxfp8", "torchao_mxfp8:rceil", "torchao-0.18-mxfp8-rceil", "rceil"),
    ("compressed_tensors", "per-tensor", "compressed_tensors_fp8:tensor",
     "compressed-tensors-0.20-tensor", "vllm-per-tensor"),
    ("compressed_tensors", "per-token", "compressed_tensors_fp8:token",
     "compressed-tensors-0.20-token", "vllm-native-per-token"),
    ("compressed_tensors", "per-group", "compressed_tensors_fp8:group_128",
     "compressed-tensors-0.20-group-128", "vllm-per-group"),
    ("compressed_tensors", "per-token", "compressed_tensors_fp8:channel",
     "compressed-tensors-0.20-channel", "vllm-native-per-token"),
]  # fmt: skip
# run here; every row of LIBRARIES is run by the ecosystem notebook (make evidence), whose
# published record is held below, so the suite runs one row of each library and format family
# (and compressed-tensors' token row, which the notebook holds to vllm-per-token instead)
LIVE = [r for r in LIBRARIES if r[2] in {"torchao_float8:rowwise", "torchao_mxfp8:rceil",
        "compressed_tensors_fp8:group_128", "compressed_tensors_fp8:token"}]  # fmt: skip
IDS = [row[2] for row in LIVE]
RESULTS = Path(__file__).resolve().parents[2] / "results" / "ecosystem"
SPEC_ELSEWHERE = {("compressed_tensors_fp8:token", "vllm-per-token")}
_RECORDED: dict[tuple[str, str, str], tuple[list[GqCall], list[Outputs]]] = {}


def _recorded(example: str, scheme: str, kernel: str) -> tuple[list[GqCall], list[Outputs]]:
    """The kernel's outputs on GQ's calls, from one isolated child per kernel and module."""
    key = (example, scheme, kernel)
    if key not in _RECORDED:
        calls = gq_calls(scheme, next(r.name for r in RULES.values() if _fits(r.name, scheme)))
        sys.path.insert(0, str(EXAMPLES / example))  # the child imports from the import path
        try:
            with KernelHost("scheme", kernel, scheme=scheme, arrays="torch") as host:
                _RECORDED[key] = (calls, record_outputs(host.kernel(), calls))
        finally:
            sys.path.remove(str(EXAMPLES / example))
    return _RECORDED[key]


def _fits(rule: str, scheme: str) -> bool:
    from fp8lab.gates.gq_plan import GQ_RULES

    return rule in GQ_RULES[scheme]


def _replayed(outputs: list[Outputs]) -> Any:
    answers = iter(outputs)
    return lambda *_args: next(answers)


@pytest.mark.parametrize(("example", "scheme", "kernel", "own", "spec"), LIVE, ids=IDS)
def test_the_library_passes_its_rule_and_fails_the_spec_rule(
    example: str, scheme: str, kernel: str, own: str, spec: str
) -> None:
    calls, outputs = _recorded(example, scheme, kernel)
    right = run_gq(_replayed(outputs), scheme=scheme, rule=own, calls=calls)
    assert right.status is GateStatus.PASS and right.assertions_failed == 0, right.reason
    wrong = run_gq(_replayed(outputs), scheme=scheme, rule=spec, calls=calls)
    assert wrong.status is GateStatus.FAIL and wrong.assertions_failed >= 3


@pytest.mark.parametrize(
    ("example", "scheme", "kernel", "own"),
    [row[:4] for row in LIVE],
    ids=IDS,
)
def test_inference_names_the_librarys_own_rule(
    example: str, scheme: str, kernel: str, own: str
) -> None:
    calls, outputs = _recorded(example, scheme, kernel)
    found = infer_rule(scheme, kernel, calls, outputs)
    assert found.status == "reproduced" and found.nearest_named == own
    assert found.chosen is not None and not found.differing, found.differing


def test_the_published_ecosystem_run_holds_every_library_row() -> None:
    import json

    runs = [d for d in sorted(RESULTS.iterdir()) if (d / "tables" / "ecosystem.json").is_file()]
    complete = [
        d for d in runs if json.loads((d / "manifest.json").read_text())["status"] == "complete"
    ]
    assert complete, "no published ecosystem run"
    table = json.loads((complete[-1] / "tables" / "ecosystem.json").read_text())
    for _, scheme, kernel, own, spec in LIBRARIES:
        (row,) = [r for r in table if r["kernel"].endswith(f".{kernel}")]
        assert (row["scheme"], row["own_rule"]) == (scheme, own)
        assert row["spec_rule"] == spec or (kernel, row["spec_rule"]) in SPEC_ELSEWHERE
        assert (row["inferred"], row["inferred_rule"]) == ("reproduced", own), row
        assert (row["own_status"], row["spec_status"]) == ("PASS", "FAIL"), row
        assert row["own_failed"] == 0 and row["spec_failed"] >= 3, row


def test_the_commands_on_a_library() -> None:
    # GQ on torchao's rowwise kernel under its rule (exit 0) and vLLM's (exit 1) is the
    # manual's block in docs/gates/gq.md, run as written by tests/docs/test_code_blocks.py
    argv = [
        "rules",
        "infer",
        "--scheme",
        "per-group",
        "--kernel",
        "compressed_tensors_fp8:group_128",
    ]
    folder = EXAMPLES / "compressed_tensors"
    done = run_main([*argv, "--arrays", "torch"], cwd=folder, path=[folder])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "inferred: compressed-tensors-0.20-group-128's own declaration" in done.stdout
