"""The extras registry: every extra it names is in pyproject.toml, and absence names the install."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from fp8lab.runtime.extras import EXTRAS, absent, install_line, missing_modules

ROOT = Path(__file__).resolve().parents[2]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_each_extra_is_declared_and_installs_by_its_name(name: str) -> None:
    assert name in DECLARED
    assert install_line(name) == f"pip install 'fp8lab[{name}]'"


def test_the_cuda_host_extra_holds_the_header_and_nvrtc_wheels() -> None:
    wheels = {r.split("=")[0].split(">")[0] for r in DECLARED["cuda-host"]}
    assert wheels == {
        "nvidia-cuda-runtime",
        "nvidia-cuda-crt",
        "nvidia-cuda-cccl",
        "nvidia-cuda-nvrtc",
    }
    assert "fp8lab[cuda-host]" in DECLARED["test"]


def test_a_module_set_to_none_is_absent_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    assert missing_modules("torch") == ("torch",)
    assert absent("torch") == "torch is absent: pip install 'fp8lab[torch]'"


def test_several_missing_modules_are_all_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "triton", None)
    assert absent("triton") == "torch, triton are absent: pip install 'fp8lab[triton]'"


def test_an_installed_module_is_not_absent() -> None:
    assert absent("ecosystem", ("numpy",)) == ""


def test_an_unknown_extra_is_an_error() -> None:
    with pytest.raises(KeyError):
        absent("no-such-extra")
