"""Shared fixtures: formats, both encoder twins, probe inputs."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

from fp8lab.refs import ScanPolicy
from fp8lab.runtime.cluster import SCHEDULER_ENV
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.formats import FORMATS, FP8_FORMATS

pytest_plugins = ["tests.budget", "tests.ledger"]

# Deterministic: hypothesis draws from a fixed seed and keeps no example database.
settings.register_profile("fp8lab", derandomize=True, database=None)
settings.load_profile("fp8lab")


@pytest.fixture(autouse=True)
def _no_ambient_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    """A $FP8LAB_SCHEDULER exported for notebook kernels never sends a test's sweeps away."""
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)


# The fp8 element formats: the tests taking ``fmt`` were written for their semantics
# (a NaN code, a zero, a sign bit). The OCP MX formats have their own tests (``mx_fmt``).
ALL_FORMATS = list(FP8_FORMATS.values())
MX_FORMATS = [f for f in FORMATS.values() if f.name not in FP8_FORMATS]


@pytest.fixture(params=ALL_FORMATS, ids=lambda f: f.name)
def fmt(request: pytest.FixtureRequest) -> FormatSpec:
    return request.param


@pytest.fixture(params=MX_FORMATS, ids=lambda f: f.name)
def mx_fmt(request: pytest.FixtureRequest) -> FormatSpec:
    return request.param


def magnitudes(fmt: FormatSpec) -> list[Fraction]:
    """Every finite magnitude plus the overflow candidate, from the fields."""
    return [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]


def midpoint_probes(fmt: FormatSpec, dtype: type) -> np.ndarray:
    """Every midpoint and one step either side, both signs, in ``dtype``."""
    mags = magnitudes(fmt)
    mids = np.array([float((a + b) / 2) for a, b in itertools.pairwise(mags)], dtype)
    up = np.nextafter(mids, dtype(np.inf))
    down = np.nextafter(mids, dtype(0))
    values = np.concatenate([mids, up, down])
    return np.concatenate([values, -values]).astype(dtype)


def special_probes(fmt: FormatSpec) -> np.ndarray:
    """Max, max + half ulp, ±0, the smallest subnormal and half of it, inf, NaN."""
    top = float(fmt.max)
    half_ulp = float(fmt.max - fmt.magnitude_value(fmt.max_code - 1)) / 2
    tiny = float(fmt.smallest_subnormal)
    values = [
        top,
        top + half_ulp,
        top + 2 * half_ulp,
        464.0,
        2.0**-10,
        tiny,
        tiny / 2,
        tiny / 4,
        0.0,
        np.inf,
        np.nan,
        1e30,
        1e-30,
    ]
    arr = np.array(values, np.float64)
    return np.concatenate([arr, -arr])


# (saturate, NaN policy) pairs the codec tests run: every codec NaN policy, both overflows
CODEC_POLICIES = [
    (True, "canonical"),
    (True, "keep-sign"),
    (False, "canonical"),
    (False, "keep-sign"),
    (True, "all-ones"),
    (False, "keep-sign-all-ones"),
]


def scan_policy(saturate: bool, nan: str) -> ScanPolicy:
    """The scan reference's own statement of a codec NaN policy (its name read literally)."""
    return ScanPolicy(saturate, nan.startswith("keep-sign"), nan.endswith("all-ones"))


def needs(*modules: str, extra: str) -> pytest.MarkDecorator:
    """Skip, saying which, where a top-level module is not installed (found, not imported).

    Collection then imports no torch, compressed-tensors, triton, dask or mkdocs for
    the tests that ``make test-fast`` leaves out anyway.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    why = f"{', '.join(missing)} not installed (optional: the {extra} extra)"
    return pytest.mark.skipif(bool(missing), reason=why)


class LazyModule:
    """A module imported on its first attribute, so a test module can name it at top level."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # pytest's collection asks for __test__ and its own marks
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)
