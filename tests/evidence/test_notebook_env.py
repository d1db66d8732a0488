"""A notebook's processes run with idle OpenMP and OpenBLAS threads asleep, unless the user says."""

from __future__ import annotations

import pytest

from fp8lab.evidence.execute import notebook_env
from fp8lab.runtime.parallel import QUIET_THREADS_ENV
from fp8lab.runtime.proctree import TOKEN_ENV


def test_idle_threads_sleep_in_a_notebooks_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in QUIET_THREADS_ENV:
        monkeypatch.delenv(name, raising=False)
    env = notebook_env("/staging/run")
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and env["OPENBLAS_THREAD_TIMEOUT"] == "4"
    assert env[TOKEN_ENV] == "/staging/run"


def test_a_setting_of_the_users_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    env = notebook_env("t")
    assert env["OMP_WAIT_POLICY"] == "ACTIVE" and env["OPENBLAS_THREAD_TIMEOUT"] == "4"
