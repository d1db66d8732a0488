"""``fp8lab gates --gate GQ --kernel``: a planted defect goes red through the real command.

The command runs in a real process and the kernel in its child
(``fp8lab.kernels.sources.isolated``): a wrong rule, a kernel that ends its process or
raises ``SystemExit``, and one that writes into its input each give exit
status 1 and a FAIL row naming the reason; the same harness passes the right
kernel (exit 0). Bad ``--scheme``/``--rule`` values are one line and status 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fp8lab.cli.main import main
from fp8lab.gates import GateResult, GateStatus
from fp8lab.specs.gates import Gate
from tests.meta.gates_subprocess import run_gates

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]

KERNELS = """
import os
import signal

from fp8lab.kernels.scheme import scheme_quant


def right(x):
    return scheme_quant(x, "vllm-per-token")


def native(x):  # the torch path of the same op: x * s.reciprocal(), NaN into the scale
    return scheme_quant(x, "vllm-native-per-token")


def negates_its_input(x):
    # writes -x into the array it was handed, then answers for -x: green only if
    # the harness read its expectation back from that array after the call
    x.flags.writeable = True
    x *= -1
    return scheme_quant(x, "vllm-per-token")


def writes_read_only(x):
    x[0, 0] = 0
    return scheme_quant(x, "vllm-per-token")


def exit0(x):
    raise SystemExit(0)


def hard_exit0(x):
    os._exit(0)


def segfault(x):
    os.kill(os.getpid(), signal.SIGSEGV)
"""

PER_TOKEN = ["--gate", "GQ", "--scheme", "per-token", "--rule", "vllm-per-token"]


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("gqkernels")
    (tmp / "gqk.py").write_text(KERNELS)
    return tmp


def test_the_right_kernel_passes_through_the_command(kernel_dir: Path) -> None:
    out = kernel_dir / "right.json"
    proc = run_gates(kernel_dir, *PER_TOKEN, "--kernel", "gqk:right", "--json", str(out))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    (row,) = json.loads(out.read_text())
    assert (row["gate"], row["kernel"], row["status"]) == ("GQ", "gqk:right", "PASS")
    assert (row["scheme"], row["rule"]) == ("per-token", "vllm-per-token")
    assert row["cases"] == 42 and row["words"] > 10_000


def test_a_segfaulting_kernel_cannot_end_the_command(kernel_dir: Path) -> None:
    out = kernel_dir / "segv.json"
    proc = run_gates(kernel_dir, *PER_TOKEN, "--kernel", "gqk:segfault", "--json", str(out))
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    (row,) = json.loads(out.read_text())  # the FAIL record still names scheme and rule
    assert (row["status"], row["scheme"], row["rule"]) == ("FAIL", "per-token", "vllm-per-token")
    fail_rows = [line for line in proc.stdout.splitlines() if "FAIL" in line]
    assert any("gqk:segfault" in line and "SIGSEGV" in line for line in fail_rows), proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("gqk:native", "mismatches in"),
        ("gqk:negates_its_input", "mismatches in"),
        ("gqk:hard_exit0", "status 0"),
    ],
)
def test_a_defective_kernel_is_a_fail_row_with_the_reason(
    kernel_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spec: str,
    reason: str,
) -> None:
    """In-process command, the kernel still in its child (which inherits sys.path).

    A raise or write into the read-only input inside the call is a per-call
    FAIL that ``tests/meta/test_gq_goes_red.py`` plants through the API.
    """
    monkeypatch.syspath_prepend(str(kernel_dir))
    assert main(["gates", *PER_TOKEN, "--kernel", spec]) == 1
    fail_rows = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    assert any(spec in line and reason in line for line in fail_rows), fail_rows


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--scheme", "nvfp8"], "per-tensor, per-token, per-group, mxfp8, nvfp4"),
        (
            ["--rule", "vllm-per-grup"],
            "vllm-per-group-ue8m0, compressed-tensors-0.20-group-128, ocp-floor, rceil",
        ),
        (["--scheme", "mxfp8", "--rule", "vllm-per-group"], "ocp-floor, rceil"),
        (["--kernel", "gqk:right", "--scheme", "per-token"], "--scheme and --rule"),
        (["--kernel", "./libq.so:f", "--scheme", "mxfp8", "--rule", "rceil"], "no such file"),
        (["--kernel", "gqk:no_such_func", "--scheme", "mxfp8", "--rule", "rceil"], "gqk"),
        (["--nan-policy", "canonical", "--kernel", "gqk:right"], "G1 only"),
    ],
)
def test_bad_gq_options_are_one_line_and_status_2(
    kernel_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    names: str,
) -> None:
    monkeypatch.syspath_prepend(str(kernel_dir))
    assert main(["gates", "--gate", "GQ", *argv]) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and names in err, err
    assert "Traceback" not in err and out == ""


def test_scheme_options_need_gq(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gates", "--gate", "G1", "--rule", "rceil"]) == 2
    assert "is no static rule; G1 takes one of" in capsys.readouterr().err
    assert main(["gates", "--gate", "G1", "--scheme", "mxfp8"]) == 2
    assert "--scheme and --rule apply to GQ only" in capsys.readouterr().err
    assert main(["gates", "--gate", "G3", "--rule", "rceil"]) == 2
    assert "--scheme and --rule apply to GQ only" in capsys.readouterr().err
    assert main(["gates", "--gate", "G3", "--rule", "onnx-quantizelinear-e4m3fn"]) == 2
    assert "--rule applies to G1 only" in capsys.readouterr().err


def test_all_includes_gq_and_a_kernel_only_with_its_scheme_and_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--gate all`` runs GQ on the ports; with --kernel, only when --scheme and --rule say
    what that kernel computes (a G1 kernel is not a GQ kernel). The gates are stubbed."""
    ran: list[tuple[str, str | None]] = []

    def stub(gate: Gate, args: argparse.Namespace, options: object) -> list[GateResult]:
        ran.append((gate.name, args.kernel))
        return [GateResult(gate.name, "stub", GateStatus.PASS, "", 1, 1, 0, 1, 0, 0)]

    monkeypatch.setattr("fp8lab.cli.gates_cmd._run_gate", stub)
    assert main(["gates", "--gate", "all"]) == 0
    assert ("GQ", None) in ran
    ran.clear()
    assert main(["gates", "--gate", "all", "--kernel", "gqk:right"]) == 0
    assert ran and all(name != "GQ" for name, _ in ran)
    ran.clear()
    argv = ["--scheme", "per-token", "--rule", "vllm-per-token", "--kernel", "gqk:right"]
    assert main(["gates", "--gate", "all", *argv]) == 0
    assert ("GQ", "gqk:right") in ran
