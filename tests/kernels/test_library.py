"""The library quantizers fp8lab ships as kernels, called in this process, against the rule ports.

Each wrapper's codes and scales equal, bit for bit, those of the numpy port of
the rule fp8lab names after its library, on a seeded input; the examples
re-export the same functions. Skipped, with the reason, without the
``ecosystem`` extra.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from fp8lab.kernels.scheme import nvfp4_quant, scheme_quant
from fp8lab.studies.ecosystem import ECOSYSTEM_ROWS, LibraryRow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _call(row: LibraryRow, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    torch = pytest.importorskip("torch", reason="torch is not installed (the ecosystem extra)")
    module = row.library.replace("-", "_")
    pytest.importorskip(module, reason=f"{row.library} is not installed (the ecosystem extra)")
    path, _, name = row.kernel.partition(":")
    func = getattr(importlib.import_module(path), name)
    g = np.abs(x).max(keepdims=True).reshape(1)  # nvfp4: the global amax, float32 [1]
    args = (
        (torch.from_numpy(x), torch.from_numpy(g))
        if row.scheme == "nvfp4"
        else (torch.from_numpy(x),)
    )
    codes, scales = func(*args)
    return codes.view(torch.uint8).numpy(), scales.numpy()


@pytest.mark.parametrize("row", ECOSYSTEM_ROWS, ids=lambda r: r.kernel.rpartition(".")[2])
def test_wrapper_equals_its_rules_port(row: LibraryRow) -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 256)) * np.exp2(rng.integers(-20, 20, (4, 1)))).astype(np.float32)
    x[1] = 0.0  # an all-zero row: the floors and zero scales
    codes, scales = _call(row, x)
    if row.scheme == "nvfp4":
        want_codes, want_scales = nvfp4_quant(
            x, np.abs(x).max(keepdims=True).reshape(1), row.own_rule
        )
    else:
        want_codes, want_scales = scheme_quant(x, row.own_rule)
    assert np.array_equal(codes, want_codes)
    assert np.array_equal(scales.view(np.uint32), want_scales.view(np.uint32))


@pytest.mark.parametrize(
    ("folder", "module", "names"),
    [
        ("torchao", "torchao_float8", ("tensorwise", "rowwise")),
        ("compressed_tensors", "compressed_tensors_fp8", ("tensor", "token", "group_128")),
        ("torchao", "torchao_nvfp4", ("quantize",)),
    ],
)
def test_examples_name_the_packaged_kernels(
    folder: str, module: str, names: tuple[str, ...]
) -> None:
    spec = importlib.util.spec_from_file_location(
        f"example_{module}", EXAMPLES / folder / f"{module}.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    packaged = sys.modules[f"fp8lab.kernels.library.{module}"]
    assert all(getattr(example, n) is getattr(packaged, n) for n in names)
