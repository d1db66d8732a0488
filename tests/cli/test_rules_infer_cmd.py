"""``fp8lab rules infer`` end to end: a kernel in its own process, its rule file, statuses.

A named rule's port (an NVFP4 one too) is recovered (exit 0), and the rule file
written for it passes GQ on that same kernel; a kernel with one flipped code bit
reproduces nothing (exit 1, the nearest rule named); a raising kernel is a
kernel-error (exit 4); a kernel that leaves its rounding mode changed is still
inferred, the change is named, and ``--strict-env`` makes that exit 1. Bad
input (one line, exit 2) is in ``test_rules_cmd.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.specs.nvfp4_rule_file import read_any_rule_file
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule
from fp8lab.specs.scale_rules import RULES, read_rule_file
from tests.meta.gates_subprocess import run_fp8lab, run_gates

pytestmark = pytest.mark.process

KERNELS = """\
import ctypes
import ctypes.util

from fp8lab.kernels.scheme import SCHEME_PORTS

port = SCHEME_PORTS[{name!r}]
calls = [0]


def flipped(x):
    codes, scales = port(x)
    calls[0] += 1
    if calls[0] == 5:
        codes = codes.copy()
        codes.reshape(-1)[3] ^= 1
    return codes, scales


def boom(x):
    raise RuntimeError("planted")


def leaks_rounding(x):
    out = port(x)
    ctypes.CDLL(ctypes.util.find_library("m")).fesetround(0xC00)  # toward zero, kept
    return out
"""


NVFP4_KERNELS = """\
from fp8lab.kernels.scheme import SCHEME_PORTS

port = SCHEME_PORTS[{name!r}]
calls = [0]


def flipped(x, global_amax):
    codes, scales = port(x, global_amax)
    calls[0] += 1
    if calls[0] == 5:
        codes = codes.copy()
        codes.reshape(-1)[3] ^= 1
    return codes, scales
"""


def _kernels(tmp: Path, name: str) -> None:
    (tmp / "kern.py").write_text(KERNELS.format(name=name))


@pytest.mark.parametrize(
    ("scheme", "name"), [("per-token", "vllm-native-per-token"), ("per-tensor", "vllm-per-tensor")]
)
def test_a_port_is_recovered_and_its_rule_file_passes_gq(
    tmp_path: Path, scheme: str, name: str
) -> None:
    _kernels(tmp_path, name)
    argv = ["--scheme", scheme, "--kernel", "kern:port", "--write-rule", "r.toml"]
    done = run_fp8lab(tmp_path, "rules", "infer", *argv, "--json", "r.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{name}'s own declaration" in done.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["status"] == "reproduced" and record["nearest_named_rule"] == name
    assert record["calls_examined"] > 0 and record["candidates_examined"] > 0
    assert record["matching_candidates"] >= 1 and record["mismatches"]["words"] == 0
    (rule,) = read_rule_file(tmp_path / "r.toml")
    assert rule.name == f"inferred-{scheme}" and rule.name not in RULES
    gate = ["--gate", "GQ", "--rule-file", "r.toml", "--rule", rule.name, "--kernel", "kern:port"]
    checked = run_gates(tmp_path, *gate)
    assert checked.returncode == 0 and "PASS" in checked.stdout, checked.stdout + checked.stderr


def test_a_flipped_bit_reproduces_nothing_and_names_the_nearest(tmp_path: Path) -> None:
    _kernels(tmp_path, "vllm-per-token")
    argv = ["--scheme", "per-token", "--kernel", "kern:flipped", "--json", "-"]
    done = run_fp8lab(tmp_path, "rules", "infer", *argv)
    assert done.returncode == 1, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "not-reproduced" and record["matching_candidates"] == 0
    assert record["nearest_named_rule"] == "vllm-per-token"
    assert record["mismatches"]["words"] == 1 and record["mismatches"]["cases"] == 1
    assert "vllm-per-token's own declaration" in done.stderr


def test_a_raising_kernel_is_a_kernel_error(tmp_path: Path) -> None:
    _kernels(tmp_path, "vllm-per-token")
    done = run_fp8lab(tmp_path, "rules", "infer", "--scheme", "per-token", "--kernel", "kern:boom")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "kernel-error" in done.stderr and "planted" in done.stderr


def test_a_leaked_rounding_mode_is_named_and_fails_under_strict_env(tmp_path: Path) -> None:
    _kernels(tmp_path, "vllm-per-token")
    argv = ["--scheme", "per-token", "--kernel", "kern:leaks_rounding", "--json", "r.json"]
    done = run_fp8lab(tmp_path, "rules", "infer", *argv, "--strict-env")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fp_env_changed: the kernel left rounding toward zero" in done.stdout
    assert "(a FAIL under --strict-env)" in done.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["status"] == "reproduced" and record["strict_env"] is True
    assert record["nearest_named_rule"] == "vllm-per-token"
    assert "rounding toward zero" in record["fp_env_changed"]


def test_an_nvfp4_port_is_recovered_and_its_rule_file_passes_gq(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(NVFP4_KERNELS.format(name="te-nvfp4-fused"))
    argv = ["--scheme", "nvfp4", "--kernel", "kern:port", "--write-rule", "r.toml"]
    done = run_fp8lab(tmp_path, "rules", "infer", *argv, "--json", "r.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "te-nvfp4-fused's own declaration" in done.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["status"] == "reproduced" and record["nearest_named_rule"] == "te-nvfp4-fused"
    assert record["candidates_examined"] == 256 and record["mismatches"]["words"] == 0
    (rule,) = read_any_rule_file(tmp_path / "r.toml")
    assert isinstance(rule, Nvfp4ScaleRule) and rule.name == "inferred-nvfp4"
    assert rule.order == NVFP4_RULES["te-nvfp4-fused"].order
    gate = ["--gate", "GQ", "--scheme", "nvfp4", "--rule-file", "r.toml", "--rule", rule.name]
    checked = run_gates(tmp_path, *gate, "--kernel", "kern:port")
    assert checked.returncode == 0 and "PASS" in checked.stdout, checked.stdout + checked.stderr


def test_an_nvfp4_flipped_bit_reproduces_nothing_and_names_the_nearest(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(NVFP4_KERNELS.format(name="te-nvfp4-divide"))
    argv = ["--scheme", "nvfp4", "--kernel", "kern:flipped", "--json", "-"]
    done = run_fp8lab(tmp_path, "rules", "infer", *argv)
    assert done.returncode == 1, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "not-reproduced" and record["matching_candidates"] == 0
    assert record["nearest_named_rule"] == "te-nvfp4-divide"
    assert record["mismatches"]["words"] == 1 and record["mismatches"]["cases"] == 1
