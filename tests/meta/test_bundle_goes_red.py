"""Dumped outputs. The whole loop (export, the C++ reference runner,
``gates --outputs``) passes a correct kernel, and every planted defect in the files FAILs
naming the case, or is refused (exit 2) when the bundle is not this version's."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.bundle import bundle_cases, load_bundle
from fp8lab.cli.main import main
from fp8lab.gates import run_g1, run_g3
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
from tests.meta.bundle_helpers import build_runner, cases, flip

GATES = ("G1", "G3")
CASES = {"G1": 14, "G3": 9}  # G1: 7 scales x 2 dtypes; G3: 8 products and the NaN case
# The examples' -D defects that still write every output (G1, G3).
COMPILED_DEFECTS = [("G1", "DIVIDE"), ("G1", "TIES_AWAY"), ("G3", "REVERSE_K")]

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the runner)"),
]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A bundle per gate, exported by the CLI and run by the C++ reference runner."""
    root = tmp_path_factory.mktemp("bundles")
    made = {}
    for gate in GATES:
        assert main(["export", "--gate", gate, "--out", str(root / gate)]) == 0
        run = subprocess.run(
            [str(build_runner(gate, root)), str(root / gate)], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        made[gate] = root / gate
    return made


def _copy(bundles: dict[str, Path], gate: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundles[gate], tmp_path / gate))


def _check(
    gate: str, bundle: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    status = main(["gates", "--gate", gate, "--outputs", str(bundle), *extra, "--json", "-"])
    out, _ = capsys.readouterr()
    return status, json.loads(out)[0]


@pytest.mark.parametrize("gate", GATES)
def test_the_whole_loop_passes_a_correct_kernel(
    gate: str, bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, record = _check(gate, bundles[gate], capsys)
    assert status == 0 and record["status"] == "PASS", record["reason"]
    assert record["kernel"] == f"bundle:{bundles[gate]}"
    assert record["cases"] == CASES[gate] and record["words"] > 0
    assert record["nan_policy"] == ("canonical" if gate == "G1" else None)


@pytest.mark.parametrize(("gate", "defect"), COMPILED_DEFECTS)
def test_a_defect_compiled_into_the_runners_kernel_fails(
    gate: str, defect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "bundle"
    assert main(["export", "--gate", gate, "--out", str(bundle)]) == 0
    run = subprocess.run([str(build_runner(gate, tmp_path, defect)), str(bundle)], check=False)
    assert run.returncode == 0
    capsys.readouterr()
    status, record = _check(gate, bundle, capsys)
    assert status == 1 and record["status"] == "FAIL" and record["mismatches"] > 0


def test_a_kernel_error_in_the_runner_leaves_outputs_missing_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "bundle"
    assert main(["export", "--gate", "G1", "--out", str(bundle)]) == 0
    run = subprocess.run(
        [str(build_runner("G1", tmp_path, "STATUS")), str(bundle)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 1 and "fp8lab_quant returned 7" in run.stderr
    capsys.readouterr()
    status, record = _check("G1", bundle, capsys)
    assert status == 1 and "is missing" in record["reason"]


@pytest.mark.parametrize("gate", GATES)
def test_one_flipped_byte_fails_naming_its_case(
    gate: str, bundles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _copy(bundles, gate, tmp_path)
    case = cases(bundle)[3]
    flip(bundle / case["output"], 8)  # G1: word 8's code; G3: out[0,2]'s low mantissa bit
    status, record = _check(gate, bundle, capsys)
    assert status == 1 and record["status"] == "FAIL"
    assert record["mismatches"] >= 1 and record["assertions_failed"] >= 1
    assert {o["case"] for o in record["first_offenders"]} == {case["name"]}
    failed = [c["name"] for c in record["case_results"] if c["assertions_failed"]]
    assert failed == [case["name"]]


def _plant_file_faults(gate: str, bundle: Path) -> dict[str, str]:
    """A missing, a short and a long output, a changed and a missing input: case -> words."""
    listed = cases(bundle)
    (bundle / listed[0]["output"]).unlink()
    short, long = bundle / listed[1]["output"], bundle / listed[2]["output"]
    short.write_bytes(short.read_bytes()[:-1])
    long.write_bytes(long.read_bytes() + b"\0")
    inputs = ("input",) if gate == "G1" else ("a", "b")
    faults = {
        listed[0]["name"]: f"output file {listed[0]['output']} is missing",
        listed[1]["name"]: "is short",
        listed[2]["name"]: "is long",
    }
    for i, field in enumerate(inputs, start=3):
        flip(bundle / listed[i][field], 0, 0x40)
        faults[listed[i]["name"]] = f"{field} file {listed[i][field]} changed since export"
    gone = listed[6]
    (bundle / gone[inputs[-1]]).unlink()
    faults[gone["name"]] = f"{inputs[-1]} file {gone[inputs[-1]]} is missing"
    return faults


@pytest.mark.parametrize("gate", GATES)
def test_missing_short_long_outputs_and_changed_inputs_fail_naming_the_case(
    gate: str, bundles: dict[str, Path], tmp_path: Path
) -> None:
    bundle = _copy(bundles, gate, tmp_path)
    faults = _plant_file_faults(gate, bundle)
    result = (run_g1 if gate == "G1" else run_g3)(load_bundle(bundle, gate))
    assert result.status.value == "FAIL"
    errors = {c.name: c.error for c in result.case_results if c.error}
    assert set(errors) == set(faults), errors
    for name, words in faults.items():
        assert f"case {name!r}: " in errors[name] and words in errors[name], errors[name]
    assert next(iter(faults)) in result.reason


def test_a_nan_placement_fault_names_the_placement(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    bundle = _copy(bundles, "G3", tmp_path)
    placement = cases(bundle)[-1]  # G3 reports all five as one case, nan-propagation
    (bundle / placement["output"]).unlink()
    result = run_g3(load_bundle(bundle, "G3"))
    (nan_case,) = [c for c in result.case_results if c.name == "nan-propagation"]
    assert nan_case.assertions_failed == 1 and placement["name"] in nan_case.error


def test_outputs_from_the_python_builtin_pass_g3_and_a_flipped_bit_fails(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    bundle = _copy(bundles, "G3", tmp_path)
    for c in cases(bundle):
        a = np.fromfile(bundle / c["a"], np.uint8).reshape(c["m"], c["k"])
        b = np.fromfile(bundle / c["b"], np.uint8).reshape(c["n"], c["k"])
        out = {"float32": "f32", "bfloat16": "bf16"}[c["out_dtype"]]
        with np.errstate(invalid="ignore"):
            got = BUILTIN_MATMUL_KERNELS["vllm_cpp"].matmul(a, b, c["s_in"], c["s_w"], out)
        (bundle / c["output"]).write_bytes(got.tobytes())
    assert run_g3(load_bundle(bundle, "G3")).status.value == "PASS"
    flip(bundle / cases(bundle)[5]["output"], 2 * 64 * 7)  # bf16 out[7,0], low mantissa bit
    result = run_g3(load_bundle(bundle, "G3"))
    assert result.status.value == "FAIL" and result.mismatches_by_class["bitwise"] == 1


def test_the_nan_policy_is_the_one_stated_not_one_the_bundle_declares(
    bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, record = _check("G1", bundles["G1"], capsys, "--nan-policy", "clamp-pos")
    assert status == 1 and record["nan_policy"] == "clamp-pos"
    assert "NaN inputs break NaN policy 'clamp-pos'" in record["reason"]


def _edit_json(bundle: Path, **changes: Any) -> None:
    path = bundle / "bundle.json"
    document = json.loads(path.read_text()) | changes
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"population_sha256": "0" * 64}, "another population"),
        ({"schema": "fp8lab.bundle/2"}, "unknown bundle schema"),
        ({"gate": "G3"}, "is a bundle of 'G3'"),
        ({"cases": []}, "cases differ from its population"),
    ],
)
def test_a_bundle_this_version_did_not_export_is_refused(
    change: dict[str, Any],
    words: str,
    bundles: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle = _copy(bundles, "G1", tmp_path)
    _edit_json(bundle, **change)
    status = main(["gates", "--gate", "G1", "--outputs", str(bundle)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert words in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--gate", "G2"],
        ["--gate", "G1,G3"],
        ["--gate", "G1", "--kernel", "m:f"],
        ["--gate", "G3", "--large"],
        ["--gate", "G3", "--nan-policy", "canonical"],
        ["--gate", "G1", "--nan-policy", "no-such-policy"],
    ],
)
def test_outputs_refuses_what_a_bundle_cannot_answer(
    argv: list[str], bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["gates", *argv, "--outputs", str(bundles["G1"])])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err


def test_a_directory_without_a_bundle_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gates", "--gate", "G1", "--outputs", str(tmp_path)]) == 2
    assert "no bundle.json" in capsys.readouterr().err


def test_export_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "b"
    target.mkdir()
    (target / "evidence.txt").write_text("keep me")
    assert main(["export", "--gate", "G1", "--out", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "never overwritten" in err
    assert [p.name for p in target.iterdir()] == ["evidence.txt"]
    assert main(["export", "--gate", "G2", "--out", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c").exists() and not list(tmp_path.glob(".c.partial-*"))


def _g1_key(x: np.ndarray, scale: Any) -> tuple[Any, ...]:
    s = np.max(np.asarray(scale, np.float32))  # the shard case hands the shards
    return (x.dtype.name, hashlib.sha256(x.tobytes()).hexdigest(), float(s))


def test_the_bundle_holds_exactly_the_calls_g1_makes() -> None:
    calls: list[tuple[Any, ...]] = []

    class Spy:
        name = "spy"

        def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
            calls.append(_g1_key(x, scale))
            return BUILTIN_KERNELS["vllm_cpp"].quantize(x, np.max(np.float32(scale)))

    assert run_g1(Spy()).status.value == "PASS"
    exported = [_g1_key(c.inputs["input"], c.entry["scale"]) for c in bundle_cases("G1")]
    assert calls == exported and len(calls) == CASES["G1"]


def test_the_bundle_holds_exactly_the_calls_g3_makes() -> None:
    calls: list[tuple[Any, ...]] = []
    inner = BUILTIN_MATMUL_KERNELS["vllm_cpp"]

    class Spy:
        name = "spy"

        def matmul(self, a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> Any:
            calls.append((a.tobytes(), b.tobytes(), float(s_in), float(s_w), out))
            return inner.matmul(a, b, s_in, s_w, out)

    assert run_g3(Spy()).status.value == "PASS"
    names = {"float32": "f32", "bfloat16": "bf16"}
    exported = [
        (c.inputs["a"].tobytes(), c.inputs["b"].tobytes(), c.entry["s_in"], c.entry["s_w"],
         names[c.entry["out_dtype"]])
        for c in bundle_cases("G3")
    ]  # fmt: skip
    # G3's warm-up calls the first case twice first (--warmup 1: once, then once more to
    # compare): the same inputs, so the bundle holds every distinct call
    assert calls[2:] == exported and calls[:2] == exported[:1] * 2 and len(exported) == 13


@pytest.mark.parametrize("gate", GATES)
def test_the_sidecar_says_what_bundle_json_says(gate: str, bundles: dict[str, Path]) -> None:
    lines = (bundles[gate] / "bundle.txt").read_text().splitlines()
    listed = cases(bundles[gate])
    assert lines[0] == f"fp8lab.bundle/1 {gate} {len(listed)}" and len(lines) == len(listed) + 1
    for line, case in zip(lines[1:], listed, strict=True):
        if gate == "G1":
            keys = ("scale_hex", "input_dtype", "count", "input", "output")
        else:
            keys = ("m", "n", "k", "a", "b", "s_in", "s_w", "out_dtype", "output")
        fields = line.split(" ", len(keys))
        assert fields[-1] == case["name"]
        for key, text in zip(keys, fields, strict=False):
            if key in ("s_in", "s_w"):
                assert np.uint32(int(text, 16)).view(np.float32) == np.float32(case[key])
            else:
                assert text == str(case[key]), (key, text)


@pytest.mark.parametrize("field", ["output", "input"])
def test_a_file_linked_to_outside_the_bundle_is_refused_even_with_the_right_bytes(
    field: str, bundles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _copy(bundles, "G1", tmp_path)
    assert _check("G1", bundle, capsys)[0] == 0  # the control: the same bytes, inside
    rel = cases(bundle)[3][field]
    outside = tmp_path / "elsewhere.bin"
    shutil.move(bundle / rel, outside)
    (bundle / rel).symlink_to(outside)
    assert main(["gates", "--gate", "G1", "--outputs", str(bundle)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert f"{rel} is a symbolic link" in err


def test_a_linked_folder_and_a_deep_or_linked_bundle_json_are_refused(
    bundles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _copy(bundles, "G1", tmp_path)
    shutil.move(bundle / "outputs", tmp_path / "outside-outputs")
    (bundle / "outputs").symlink_to(tmp_path / "outside-outputs")
    assert main(["gates", "--gate", "G1", "--outputs", str(bundle)]) == 2
    assert "outputs is a symbolic link" in capsys.readouterr().err
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "bundle.json").write_text("[" * 200_000 + "]" * 200_000)
    assert main(["gates", "--gate", "G1", "--outputs", str(deep)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nested deeper than" in err
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "bundle.json").symlink_to(bundle / "bundle.json")
    assert main(["gates", "--gate", "G1", "--outputs", str(linked)]) == 2
    assert "bundle.json is a symbolic link" in capsys.readouterr().err
