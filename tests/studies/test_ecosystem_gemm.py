"""The ecosystem notebook's GEMM rows: absent libraries, the sequential/folded foil, the summary."""

from __future__ import annotations

import dataclasses

import pytest

from fp8lab.refs.gemm_declared import declared_output_bits
from fp8lab.specs.gemm_decl import GemmDeclaration, TreeClass
from fp8lab.studies.ecosystem_gemm import (
    GEMM_ROWS,
    GemmRow,
    gemm_row,
    gemm_summary,
    gemm_version,
    sequential_folded,
)


def test_a_library_that_does_not_import_is_absent_and_measures_nothing() -> None:
    row = GemmRow("no-such-lib", ("no_such_module",), "x", "no_such_module:f")
    got = gemm_row(row, (4, 16, 32))
    assert got["status"] == "absent" and got["version"] == "absent"
    assert got["own_status"] is None and "no_such_module" in got["reason"]
    assert gemm_version(row) is None


def test_every_row_names_an_example_kernel() -> None:
    assert {r.library for r in GEMM_ROWS} == {"torch", "onnxruntime", "jax"}
    assert all(r.kernel.startswith("examples.gemm.") for r in GEMM_ROWS)


def test_the_foil_sums_in_order_with_folded_scales_at_the_same_shape() -> None:
    reverse = ((3, 2), (4, 1), (5, 0))
    decl = GemmDeclaration(
        "x", scales="product", scale_order="a-first", accumulation="inferred",
        classes=(TreeClass((1, 2, 4), "all", reverse, family="r"),), output="bfloat16",
        outputs=("bf16",), a_scale="row", b_scale="column",
    )  # fmt: skip
    foil = sequential_folded(decl)
    assert (foil.scales, foil.output, foil.outputs, foil.a_scale) == (
        "folded", "float32", ("bf16",), "row"
    )  # fmt: skip
    assert foil.classes[0].nodes == ((0, 1), (4, 2), (5, 3)) and foil.shapes == decl.shapes
    same = dataclasses.replace(foil, classes=(), accumulation="sequential")
    import numpy as np

    a = np.array([[0x38, 0x40, 0xB8, 0x30]], np.uint8)
    b = np.array([[0x38] * 4, [0x40] * 4], np.uint8)
    s_a, s_b = np.float32([0.5]), np.float32([0.25, 0.75])
    assert np.array_equal(
        declared_output_bits(a, b, s_a, s_b, "f32", foil),
        declared_output_bits(a, b, s_a, s_b, "f32", same),
    )


@pytest.mark.parametrize(
    ("status", "words"),
    [("checked", "PASS (under sequential/folded: FAIL, 7 outputs off"), ("absent", "PENDING")],
)
def test_the_summary_gives_each_row_a_verdict(status: str, words: str) -> None:
    row = {"library": "lib", "path": "p", "status": status, "reason": "r", "own_status": "PASS",
           "spec_status": "FAIL", "spec_mismatches": 7, "own_outputs": 10}  # fmt: skip
    verdicts, numbers = gemm_summary([row])
    assert words in next(iter(verdicts.values()))
    assert numbers["GEMM rows checked"] == (status == "checked")
