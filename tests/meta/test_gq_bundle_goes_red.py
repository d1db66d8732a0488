"""GQ bundles. ``fp8lab export --gate GQ`` writes the calls GQ
makes for one scheme and rule; a runner elsewhere writes ``codes`` and ``scales``;
``fp8lab gates --gate GQ --outputs DIR`` checks them bitwise against the rule's reference.

The runner here is the production-style numpy port of the rule (what a user's
machine would run). A flipped code or scale byte FAILs naming its case, a bundle
with no cases FAILs "examined nothing", and a bundle for another scheme or rule
than the one named is refused with one line (exit 2).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.bundle import bundle_cases, load_bundle
from fp8lab.cli.main import main
from fp8lab.gates import run_gq
from fp8lab.kernels.scheme import SCHEME_PORTS, nvfp4_quant
from fp8lab.kernels.sources.shared_abi import ABI_HEADER
from tests.meta.bundle_helpers import RUNNER, cases, flip

pytestmark = pytest.mark.process

SCHEME_SOURCE = RUNNER.parents[1] / "kernels" / "scheme_quant.cpp"
# scheme -> the rule its bundle is exported for
BUNDLES = {"per-token": "vllm-per-token", "mxfp8": "rceil", "nvfp4": "te-nvfp4-divide"}
_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def run_outputs(bundle: Path) -> None:
    """The runner: each case's input through the rule's port, codes and scales written raw."""
    document = json.loads((bundle / "bundle.json").read_text())
    for c in document["cases"]:
        x = np.fromfile(bundle / c["input"], _DTYPES[c["input_dtype"]]).reshape(c["m"], c["k"])
        if "global_amax_hex" in c:
            g = np.array([int(c["global_amax_hex"], 16)], np.uint32).view(np.float32)
            codes, scales = nvfp4_quant(x, g, document["rule"])
        else:
            codes, scales = SCHEME_PORTS[document["rule"]](x)
        (bundle / c["codes"]).write_bytes(codes.tobytes())
        (bundle / c["scales"]).write_bytes(scales.tobytes())


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gqbundles")
    for scheme, rule in BUNDLES.items():
        argv = ["export", "--gate", "GQ", "--scheme", scheme, "--rule", rule]
        assert main([*argv, "--out", str(root / scheme)]) == 0
        run_outputs(root / scheme)
    return {s: root / s for s in BUNDLES}


def _copy(bundles: dict[str, Path], scheme: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundles[scheme], tmp_path / scheme))


def _check(
    bundle: Path, capsys: pytest.CaptureFixture[str], scheme: str, rule: str
) -> tuple[int, dict[str, Any]]:
    argv = ["gates", "--gate", "GQ", "--scheme", scheme, "--rule", rule]
    status = main([*argv, "--outputs", str(bundle), "--json", "-"])
    out, _ = capsys.readouterr()
    return status, json.loads(out[out.index("[") :])[0]


@pytest.mark.parametrize("scheme", BUNDLES)
def test_the_whole_loop_passes_the_rules_port(
    scheme: str, bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, record = _check(bundles[scheme], capsys, scheme, BUNDLES[scheme])
    assert status == 0 and record["status"] == "PASS", record["reason"]
    assert record["kernel"] == f"bundle:{bundles[scheme]}"
    assert (record["scheme"], record["rule"]) == (scheme, BUNDLES[scheme])
    assert record["cases"] == len(cases(bundles[scheme])) and record["words"] > 40_000


@pytest.mark.parametrize(("scheme", "field"), [("per-token", "codes"), ("mxfp8", "scales")])
def test_one_flipped_code_or_scale_byte_fails_naming_its_case(
    scheme: str,
    field: str,
    bundles: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle = _copy(bundles, scheme, tmp_path)
    case = cases(bundle)[2]
    flip(bundle / case[field], 0)  # one code, or the first block's e8m0 byte
    status, record = _check(bundle, capsys, scheme, BUNDLES[scheme])
    assert status == 1 and record["status"] == "FAIL" and record["mismatches"] >= 1
    failed = [c["name"] for c in record["case_results"] if c["assertions_failed"]]
    assert failed == [case["name"]]
    assert {o["case"] for o in record["first_offenders"]} == {case["name"]}


def test_a_bundle_with_no_cases_examined_nothing(
    bundles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _copy(bundles, "per-token", tmp_path)
    document = json.loads((bundle / "bundle.json").read_text())
    (bundle / "bundle.json").write_text(json.dumps({**document, "cases": []}))
    status, record = _check(bundle, capsys, "per-token", "vllm-per-token")
    assert status == 1 and record["status"] == "FAIL" and record["cases"] == 0
    assert record["reason"] == "examined nothing"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--scheme", "per-token", "--rule", "vllm-native-per-token"], "holds scheme per-token"),
        (["--scheme", "mxfp8", "--rule", "rceil"], "holds scheme per-token"),
        (["--scheme", "per-token"], "needs --scheme and --rule"),
        ([], "needs --scheme and --rule"),
    ],
)
def test_a_bundle_for_another_scheme_or_rule_is_refused(
    argv: list[str], words: str, bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["gates", "--gate", "GQ", *argv, "--outputs", str(bundles["per-token"])])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert words in err


def test_a_bundle_relabelled_to_another_rule_is_refused(
    bundles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same population, other rule in bundle.json: the population sha256 names the rule."""
    bundle = _copy(bundles, "per-token", tmp_path)
    document = json.loads((bundle / "bundle.json").read_text())
    (bundle / "bundle.json").write_text(json.dumps({**document, "rule": "vllm-native-per-token"}))
    argv = ["--scheme", "per-token", "--rule", "vllm-native-per-token", "--outputs", str(bundle)]
    assert main(["gates", "--gate", "GQ", *argv]) == 2
    assert "another population" in capsys.readouterr().err


def test_missing_or_short_outputs_and_a_changed_input_fail_naming_the_case(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    bundle = _copy(bundles, "mxfp8", tmp_path)
    listed = cases(bundle)
    (bundle / listed[0]["codes"]).unlink()
    short = bundle / listed[1]["scales"]
    short.write_bytes(short.read_bytes()[:-1])
    flip(bundle / listed[2]["input"], 0, 0x40)
    result = run_gq(load_bundle(bundle, "GQ"), scheme="mxfp8", rule="rceil")
    errors = {c.name: c.error for c in result.case_results if c.error}
    assert result.status.value == "FAIL" and set(errors) == {c["name"] for c in listed[:3]}
    assert "codes file" in errors[listed[0]["name"]] and "missing" in errors[listed[0]["name"]]
    assert "is short" in errors[listed[1]["name"]]
    assert "changed since export" in errors[listed[2]["name"]]


def test_the_bundle_holds_exactly_the_calls_gq_makes() -> None:
    calls: list[tuple[Any, ...]] = []

    def spy(x: np.ndarray, g: np.ndarray) -> Any:
        calls.append((x.dtype.name, x.tobytes(), g.tobytes()))
        return nvfp4_quant(x, g, "te-nvfp4-divide")

    assert run_gq(spy, scheme="nvfp4", rule="te-nvfp4-divide").status.value == "PASS"
    exported = [
        (
            c.entry["input_dtype"],
            c.inputs["input"].tobytes(),
            np.array([int(c.entry["global_amax_hex"], 16)], np.uint32).tobytes(),
        )
        for c in bundle_cases("GQ", "nvfp4", "te-nvfp4-divide")
    ]
    assert calls == exported and len(calls) == 396  # 99 tensors x 2 dtypes x 2 global amaxes


@pytest.mark.parametrize(
    "argv",
    [
        ["--gate", "GQ", "--scheme", "per-token"],
        ["--gate", "GQ", "--scheme", "per-token", "--rule", "rceil"],
        ["--gate", "G1", "--scheme", "per-token", "--rule", "vllm-per-token"],
    ],
)
def test_export_refuses_a_gq_bundle_without_a_valid_scheme_and_rule(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", *argv, "--out", str(tmp_path / "b")]) == 2
    _, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "b").exists()


def test_the_sidecar_names_scheme_and_rule(bundles: dict[str, Path]) -> None:
    lines = (bundles["nvfp4"] / "bundle.txt").read_text().splitlines()
    listed = cases(bundles["nvfp4"])
    assert lines[0] == f"fp8lab.bundle/1 GQ {len(listed)} nvfp4 te-nvfp4-divide"
    first = lines[1].split(" ", 9)
    assert first[3] == listed[0]["global_amax_hex"] and first[9] == listed[0]["name"]
    assert first[5:7] == [listed[0]["codes"], listed[0]["scales"]]
    assert first[7:9] == [
        "e4m3fn",
        str(listed[0]["scales_shape"][0] * listed[0]["scales_shape"][1]),
    ]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the runner)")
@pytest.mark.parametrize(("defect", "status"), [("", 0), ("E8M0_LOW", 1)])
def test_the_cpp_runner_with_the_example_library_closes_the_loop(
    defect: str, status: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """export, examples/bundle_runner with scheme_quant.cpp's MXFP8 RCEIL symbol, --outputs."""
    bundle = tmp_path / "b"
    assert (
        main(
            ["export", "--gate", "GQ", "--scheme", "mxfp8", "--rule", "rceil", "--out", str(bundle)]
        )
        == 0
    )
    exe = tmp_path / "run_bundle"
    flags = ["-DFP8LAB_SCHEME_QUANT_IS=mxfp8_rceil_quant"] + (
        [f"-DFP8LAB_DEFECT_{defect}"] if defect else []
    )
    cmd = ["g++", "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{ABI_HEADER.parent}"]
    subprocess.run([*cmd, *flags, str(RUNNER), str(SCHEME_SOURCE), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe), str(bundle)], capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "42 of 42 outputs written" in run.stdout, run.stderr
    capsys.readouterr()
    got, record = _check(bundle, capsys, "mxfp8", "rceil")
    assert got == status and record["status"] == ("PASS" if status == 0 else "FAIL")
