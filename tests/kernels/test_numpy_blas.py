"""Numpy's BLAS is named as numpy's whichever other BLAS is loaded, in whichever order.

threadpoolctl lists every BLAS the process has loaded (scipy's comes in with
numba's linear algebra) and in no fixed order; a record's ``blas`` names
numpy's or none.
"""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.kernels.sources.library_facts import _numpys, numpy_blas

HOME = Path("/site/numpy")


def _entry(path: str, version: str) -> dict[str, Any]:
    return {"user_api": "blas", "filepath": path, "version": version}


NUMPYS = _entry("/site/numpy.libs/libscipy_openblas64_-a.so", "0.3.31")
SCIPYS = _entry("/site/scipy.libs/libscipy_openblas-b.so", "0.3.30")
SYSTEM = _entry("/usr/lib/x86_64-linux-gnu/libopenblas.so.0", "0.3.21")


@pytest.mark.parametrize("order", [0, 1], ids=["numpy first", "numpy last"])
def test_numpys_vendored_blas_is_chosen_in_either_order(order: int) -> None:
    blas = [NUMPYS, SCIPYS] if order == 0 else [SCIPYS, NUMPYS]
    assert _numpys(blas, HOME) is NUMPYS


def test_a_system_blas_is_numpys_where_numpy_vendors_none() -> None:
    assert _numpys([SCIPYS, SYSTEM], HOME) is SYSTEM
    assert _numpys([SYSTEM], HOME) is SYSTEM


def test_no_blas_is_named_where_none_is_singled_out() -> None:
    other = _entry("/opt/lib/libblis.so", "1.0")
    assert _numpys([SCIPYS], HOME) is None  # only another package's copy
    assert _numpys([SYSTEM, other], HOME) is None  # two shared ones
    assert _numpys([], HOME) is None


def test_this_process_names_numpys_own_blas() -> None:
    from threadpoolctl import threadpool_info

    with contextlib.suppress(ImportError):  # scipy's own BLAS beside numpy's, where installed
        importlib.import_module("scipy.linalg")
    facts = numpy_blas()
    home = Path(np.__file__).resolve().parent
    own = (home, home.parent / "numpy.libs")
    paths = [Path(e["filepath"]).resolve() for e in threadpool_info() if e["user_api"] == "blas"]
    vendored = [p for p in paths if any(p.is_relative_to(d) for d in own)]
    if len(vendored) == 1:  # a wheel's numpy: its own copy, whatever else is loaded
        entry = next(e for e in threadpool_info() if Path(e["filepath"]).resolve() == vendored[0])
        assert facts["version"] == entry["version"]
    assert facts["library"] not in ("not reported", "")


@pytest.mark.parametrize(
    ("listed", "word"), [([], "not reported"), ([SCIPYS], "not identified")], ids=str
)
def test_a_blas_not_singled_out_is_named_as_such(
    monkeypatch: pytest.MonkeyPatch, listed: list[dict[str, Any]], word: str
) -> None:
    import threadpoolctl

    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: listed)
    assert numpy_blas() == {"library": word, "version": None, "core_type": None, "threads": None}
