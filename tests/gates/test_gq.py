"""GQ on the built-in ports: every rule's port passes its own scheme, and the record says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GQ_RULES, GQ_SCHEMES, GateStatus, run_gq
from fp8lab.gates.records import GateResult
from fp8lab.kernels.scheme import SCHEME_PORTS, scheme_quant
from fp8lab.populations.rule_splits import split_cases
from fp8lab.populations.schemes import case_labels
from fp8lab.populations.split_cache import cached_split_table
from fp8lab.specs.gates import GATES, load
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES

SCHEME_OF = {
    "vllm-per-tensor": "per-tensor",
    "vllm-per-token": "per-token",
    "vllm-native-per-token": "per-token",
    "vllm-per-group": "per-group",
    "vllm-per-group-ue8m0": "per-group",
    "ocp-floor": "mxfp8",
    "rceil": "mxfp8",
    "torchao-0.18-mxfp8-floor": "mxfp8",
    "torchao-0.18-mxfp8-rceil": "mxfp8",
    "torchao-0.18-float8-tensorwise": "per-tensor",
    "torchao-0.18-float8-rowwise": "per-token",
    "compressed-tensors-0.20-tensor": "per-tensor",
    "compressed-tensors-0.20-token": "per-token",
    "compressed-tensors-0.20-group-128": "per-group",
    "compressed-tensors-0.20-channel": "per-token",
}
# every GQ rule (the scale rules and the NVFP4 rules, each with its element path modelled)
GQ_SCHEME_OF = {**SCHEME_OF, **dict.fromkeys(NVFP4_RULES, "nvfp4")}


# an NVFP4 block formula whose kernel's element path was not read: not a GQ rule
UNREAD = dataclasses.replace(NVFP4_RULES["te-nvfp4-fused"], name="unread", element_source=None)


def port_of(name: str):  # type: ignore[no-untyped-def]
    return lambda x: scheme_quant(x, name)


# GQ's record of each built-in port under its own rule, run once for this module: the
# per-port test and the command's run (which makes the very same call) read the same run.
_PORT_RECORDS: dict[str, GateResult] = {}


def port_record(name: str) -> GateResult:
    """``run_gq`` of the port ``name`` under its own rule, as ``fp8lab gates`` calls it."""
    if name not in _PORT_RECORDS:
        _PORT_RECORDS[name] = run_gq(SCHEME_PORTS[name], scheme=GQ_SCHEME_OF[name], rule=name)
    return _PORT_RECORDS[name]


def _gq_reading_port_records(func: Any, **options: Any) -> GateResult:
    """GQ for the command: a port under its own rule from :func:`port_record`, else a run."""
    rule = options.get("rule")
    name = str(getattr(rule, "name", rule))
    if (
        SCHEME_PORTS.get(name) is func
        and set(options) == {"scheme", "rule"}
        and options["scheme"] == GQ_SCHEME_OF[name]
    ):
        return port_record(name)
    return run_gq(func, **options)


def test_every_rule_has_a_scheme() -> None:
    assert set(SCHEME_OF) == set(RULES) and set(GQ_SCHEME_OF) == set(RULES) | set(NVFP4_RULES)
    assert set(GQ_SCHEME_OF.values()) == set(GQ_SCHEMES)
    assert {r: s for s, rules in GQ_RULES.items() for r in rules} == GQ_SCHEME_OF
    assert load(GATES["GQ"].runner) is run_gq and GATES["GQ"].kind == "scheme"
    assert {n: p.name for n, p in SCHEME_PORTS.items()} == {n: n for n in GQ_SCHEME_OF}
    # every NVFP4 rule names the kernel whose element path it models
    assert all(r.element_source for r in NVFP4_RULES.values())
    assert set(NVFP4_RULES) == {
        "te-nvfp4-divide",
        "te-nvfp4-reciprocal",
        "te-nvfp4-fused",
        "torchao-0.18-nvfp4",
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GQ_SCHEME_OF))
def test_the_port_passes_gq_and_the_record_counts_it(name: str) -> None:
    result = port_record(name)
    assert result.status is GateStatus.PASS, result.reason
    assert result.kernel == SCHEME_PORTS[name].name == name
    assert (result.gate, result.scheme, result.rule) == ("GQ", GQ_SCHEME_OF[name], name)
    # per-tensor and nvfp4: each population row is a tensor of its own
    tensor = GQ_SCHEME_OF[name] in ("per-tensor", "nvfp4")
    calls = 2 if GQ_SCHEME_OF[name] == "nvfp4" else 1  # nvfp4: the own and a 1.5x global amax
    nvfp4 = GQ_SCHEME_OF[name] == "nvfp4"  # its two formula-split cases add three tensors each
    # e4m3fn: 18 cases (three of them log2-split), 113 tensor rows (those three add 12),
    # then the rule's rule-split calls (three per input dtype; per tensor one per probe row)
    derived = (
        0
        if nvfp4
        else sum(
            len(x) if tensor else 1
            for d in ("float32", "bfloat16")
            for x in split_cases(cached_split_table(RULES[name]), "e4m3fn", d)
        )
    )
    want = 2 * calls * ((99 if nvfp4 else 113) if tensor else 18) + derived
    assert result.cases == want and result.assertions == result.cases
    assert result.words > 10_000 and result.mismatches == result.assertions_failed == 0
    labels = set(case_labels("e2m1fn" if nvfp4 else "e4m3fn"))
    labels |= {"rule-split"} if derived else set()
    assert set(result.mismatches_by_class) == labels  # every class counted, each 0
    assert set(result.mismatches_by_class.values()) == {0}
    assert result.to_dict()["rule"] == name
    # the counts are the sums over the case records (GateResult.from_cases)
    assert result.words == sum(c.words for c in result.case_results)
    assert result.assertions == sum(c.assertions for c in result.case_results)


def test_the_record_is_named_after_the_kernel_or_the_caller() -> None:
    port = SCHEME_PORTS["rceil"]
    kw = {"scheme": "mxfp8", "rule": "rceil", "input_dtypes": ["float32"]}
    assert run_gq(port, **kw).kernel == "rceil"  # type: ignore[arg-type]
    assert run_gq(port, kernel_name="mine", **kw).kernel == "mine"  # type: ignore[arg-type]
    assert run_gq(lambda x: port(x), **kw).kernel == "kernel"  # type: ignore[arg-type]


def test_the_command_runs_every_port_or_the_ones_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reading = dataclasses.replace(GATES["GQ"], runner=f"{__name__}:_gq_reading_port_records")
    monkeypatch.setitem(GATES, "GQ", reading)  # each port's GQ run once
    path = tmp_path / "gq.json"
    assert main(["gates", "--gate", "GQ", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert [(r["kernel"], r["scheme"], r["rule"]) for r in rows] == [
        (n, s, n) for s, names in GQ_RULES.items() for n in names
    ]
    assert sorted(r["rule"] for r in rows) == sorted(GQ_SCHEME_OF)
    assert {r["status"] for r in rows} == {"PASS"} and all(r["words"] > 10_000 for r in rows)
    out = capsys.readouterr().out
    assert "GQ rceil: scheme mxfp8, rule rceil" in out
    assert main(["gates", "--gate", "GQ", "--scheme", "mxfp8", "--json", str(tmp_path / "m")]) == 0
    assert [r["rule"] for r in json.loads((tmp_path / "m").read_text())] == [
        "ocp-floor",
        "rceil",
        "torchao-0.18-mxfp8-floor",
        "torchao-0.18-mxfp8-rceil",
    ]
    assert main(["gates", "--gate", "GQ", "--rule", "vllm-per-token", "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert [r["scheme"] for r in json.loads(out[out.index("[") :])] == ["per-token"]


def test_gq_refuses_a_rule_of_another_scheme_and_unknown_names() -> None:
    with pytest.raises(ValueError, match="does not describe the per-token scheme"):
        run_gq(port_of("rceil"), scheme="per-token", rule="rceil")
    with pytest.raises(ValueError, match="unknown scheme 'nvfp8'"):
        run_gq(port_of("rceil"), scheme="nvfp8", rule="rceil")
    with pytest.raises(ValueError, match="not an nvfp4 rule GQ models"):
        run_gq(port_of("rceil"), scheme="nvfp4", rule="rceil")
    with pytest.raises(ValueError, match="not an nvfp4 rule GQ models"):
        run_gq(port_of("rceil"), scheme="nvfp4", rule=UNREAD)
    with pytest.raises(ValueError, match="does not describe the mxfp8 scheme"):
        run_gq(port_of("rceil"), scheme="mxfp8", rule=NVFP4_RULES["te-nvfp4-divide"])
    with pytest.raises(ValueError, match="unknown input dtypes"):
        run_gq(port_of("rceil"), scheme="mxfp8", rule="rceil", input_dtypes=["float16"])


def test_the_other_gates_records_name_no_scheme_and_g1_its_static_rule() -> None:
    from fp8lab.gates import run_g1
    from fp8lab.kernels import BUILTIN_KERNELS

    record = run_g1(next(iter(BUILTIN_KERNELS.values())), scales=(1.0,), shard_scales=())
    assert record.to_dict()["scheme"] is None and record.to_dict()["rule"] == "vllm-cpp-static"
    assert np.isfinite(record.words)
