"""G1's NaN policy: one of a closed set of names, recorded and printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.codecs import encode
from fp8lab.gates import GateStatus, run_g1
from fp8lab.kernels import BUILTIN_KERNELS, NAN_POLICIES, FunctionKernel, static_scale
from fp8lab.specs.formats import FORMATS
from tests.meta import cli_kernels

pytestmark = pytest.mark.process

# Transcribed from the sources each policy cites (named on each line):
# (code for +NaN input, code for -NaN input).
POLICY_CODES = {
    "canonical": (0x7F, 0x7F),  # vllm.cpp F32ToFp8 step 1: NaN -> 0x7F, sign dropped
    "keep-sign": (0x7F, 0xFF),  # ml_dtypes astype / torch cast: NaN keeps its sign
    "all-ones": (0x7F, 0x7F),  # PTX cvt.rn.satfinite: every magnitude bit, sign dropped
    "keep-sign-all-ones": (0x7F, 0xFF),  # torch's CPU cast to e5m2: every magnitude bit, sign kept
    "clamp-pos": (0x7E, 0x7E),  # vLLM CUDA fmaxf(-448, fminf(x, 448)): NaN -> +448
    "clamp-neg": (0xFE, 0xFE),  # vLLM per-token-group fminf(fmaxf(x, -448), 448): NaN -> -448
}


def test_the_set_is_closed_and_each_policy_cites_its_source() -> None:
    from fp8lab.kernels import (
        NAN_POLICIES,
    )  # imported here: the module is red, not broken, on old code

    assert list(NAN_POLICIES) == list(POLICY_CODES)
    for name, policy in NAN_POLICIES.items():
        assert policy.codes(FORMATS["e4m3fn"]) == POLICY_CODES[name]
        assert any(
            impl in policy.source for impl in ("vllm", "vLLM", "ml_dtypes", "CUDA", "PTX", "torch")
        )
        assert "NaN" in policy.source  # and says what becomes of a NaN


def _with(func: Any, **attrs: Any) -> Any:
    def kernel(x: np.ndarray, scale: Any) -> np.ndarray:
        return np.asarray(func(x, scale))

    for key, value in attrs.items():
        setattr(kernel, key, value)
    return kernel


def _policy_kernel(pos: int, neg: int) -> Any:
    def kernel(x: np.ndarray, scale: Any) -> np.ndarray:
        y = np.asarray(x).astype(np.float32) * (np.float32(1) / static_scale(scale))
        out = encode(y, "e4m3fn", saturate=True, nan="canonical")
        nan = np.isnan(y)
        out[nan] = np.where(np.signbit(y[nan]), neg, pos)
        return out

    return kernel


def test_a_numeric_code_cannot_whitelist_nan_to_zero() -> None:
    with pytest.raises(ValueError, match="nan_policy"):
        run_g1(FunctionKernel("nan_to_zero", cli_kernels.nan_to_zero))
    undeclared = _with(cli_kernels.nan_to_zero)
    result = run_g1(FunctionKernel("nan_to_zero", undeclared))
    assert result.status is GateStatus.FAIL and result.nan_policy == "canonical"


def test_a_name_outside_the_set_is_an_error() -> None:
    for bad in ("0x00", "zero", "", "VLLM-CPP", 0x7F):
        with pytest.raises(ValueError, match="NaN policy"):
            run_g1(FunctionKernel("k", _with(BUILTIN_KERNELS["vllm_cpp"].quantize, nan_policy=bad)))


@pytest.mark.parametrize("name", sorted(POLICY_CODES))
def test_each_named_policy_passes_exactly_its_own_kernel(name: str) -> None:
    """A kernel passes under each policy whose e4m3fn codes are its own (the all-ones twins
    of canonical and keep-sign name the same e4m3fn codes), and fails under every other."""
    for other, codes in POLICY_CODES.items():
        result = run_g1(FunctionKernel(other, _with(_policy_kernel(*codes), nan_policy=name)))
        assert result.nan_policy == name
        same = codes == POLICY_CODES[name]
        assert (result.status is GateStatus.PASS) == same, (name, other, result.reason)


def test_a_keep_sign_kernel_passes_when_declared_and_the_record_says_so() -> None:
    # torch's CPU cast keeps the NaN sign; before the fix no such kernel could pass G1.
    result = run_g1(FunctionKernel("ml_dtypes", cli_kernels.keep_sign_ml_dtypes))
    assert result.status is GateStatus.PASS, result.reason
    assert result.nan_policy == "keep-sign" and json.loads(result.to_json())["nan_policy"] == (
        "keep-sign"
    )
    declared = FunctionKernel("codec", cli_kernels.keep_sign_undeclared, nan_policy="keep-sign")
    assert run_g1(declared).status is GateStatus.PASS


def test_a_nan_code_failure_lists_offenders_and_says_how_to_declare() -> None:
    result = run_g1(FunctionKernel("keeps_sign", cli_kernels.keep_sign_undeclared))
    assert result.status is GateStatus.FAIL and result.nan_policy == "canonical"
    assert "nan_policy" in result.reason and "--nan-policy" in result.reason
    nan_rows = [o for o in result.first_offenders if o.word_class == "special"]
    assert nan_rows and all((o.got, o.want) == ("0xff", "0x7f") for o in nan_rows)
    assert {o.input_hex for o in nan_rows} <= {"0xffc00000", "0xffc0"}


def test_the_builtins_declare_their_policy_by_name() -> None:
    assert run_g1(BUILTIN_KERNELS["upstream"]).nan_policy == "clamp-pos"
    assert run_g1(BUILTIN_KERNELS["vllm_cpp"]).nan_policy == "canonical"


def test_a_policy_passed_to_g1_is_the_one_it_holds_the_kernel_to() -> None:
    upstream = BUILTIN_KERNELS["upstream"]  # declares clamp-pos: NaN -> 0x7E
    assert run_g1(upstream, nan_policy=NAN_POLICIES["clamp-pos"]).status is GateStatus.PASS
    held = run_g1(upstream, nan_policy=NAN_POLICIES["canonical"])  # the argument, not the attribute
    assert held.status is GateStatus.FAIL and held.nan_policy == "canonical"
    assert (held.nan_policy_source, held.nan_policy_declared_by_kernel) == ("caller", None)
    assert "NaN inputs break NaN policy 'canonical'" in held.reason
    with pytest.raises(ValueError, match="NaN policy"):
        run_g1(upstream, nan_policy="vllm-cpp")  # type: ignore[arg-type]  # a name: resolve it first


def test_cli_declares_records_and_prints_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.json"
    spec = "tests.meta.cli_kernels:keep_sign_undeclared"
    assert main(["gates", "--kernel", spec, "--nan-policy", "keep-sign", "--json", str(out)]) == 0
    record = json.loads(out.read_text())[0]
    assert (record["nan_policy"], record["nan_policy_source"]) == ("keep-sign", "command-line")
    assert "keep-sign" in capsys.readouterr().out
    assert main(["gates", "--kernel", spec, "--nan-policy", "nan-to-zero"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nan-to-zero" in err[0]


def test_a_kernel_in_its_own_process_is_held_to_the_command_line_not_its_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its child could rewrite what it declares: the parent records it and never uses it."""
    upstream = ["gates", "--kernel", "fp8lab:quant_static_upstream"]  # declares clamp-pos
    assert main([*upstream, "--json", str(tmp_path / "a.json")]) == 1
    (record,) = json.loads((tmp_path / "a.json").read_text())
    assert (record["nan_policy"], record["nan_policy_source"]) == ("canonical", "default")
    assert record["nan_policy_declared_by_kernel"] == "clamp-pos"
    assert "declares NaN policy 'clamp-pos'" in record["reason"]
    capsys.readouterr()
    # a raw code declared is no policy: recorded as said, and NaN -> 0x00 FAILs canonical
    nan_to_zero = ["gates", "--kernel", "tests.meta.cli_kernels:nan_to_zero"]
    assert main([*nan_to_zero, "--json", str(tmp_path / "z.json")]) == 1
    (record,) = json.loads((tmp_path / "z.json").read_text())
    assert (record["nan_policy"], record["nan_policy_declared_by_kernel"]) == ("canonical", "0")


def test_a_kernel_is_held_to_its_source_declaration_not_its_process(tmp_path: Path) -> None:
    """The parent reads ``OBJ.nan_policy = "NAME"`` in the source as text; a rewrite at run time
    is recorded, never believed."""
    declared = ["gates", "--kernel", "tests.meta.cli_kernels:keep_sign_ml_dtypes"]
    assert main([*declared, "--json", str(tmp_path / "d.json")]) == 0
    (record,) = json.loads((tmp_path / "d.json").read_text())
    assert (record["nan_policy"], record["nan_policy_source"]) == ("keep-sign", "kernel-source")
    rewritten = ["gates", "--kernel", "tests.meta.cli_kernels:keep_sign_rewritten"]
    assert main([*rewritten, "--json", str(tmp_path / "r.json")]) == 1
    (record,) = json.loads((tmp_path / "r.json").read_text())
    assert (record["nan_policy"], record["nan_policy_source"]) == ("canonical", "kernel-source")
    assert record["nan_policy_declared_by_kernel"] == "keep-sign"
    assert record["status"] == "FAIL" and record["nan_code_mismatches"] > 0
