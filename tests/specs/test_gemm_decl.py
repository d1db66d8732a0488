"""GEMM declarations as data: the built-in file, a user's file, and what is refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fp8lab.specs.gemm_decl import (
    GEMMS,
    GemmDeclaration,
    TreeClass,
    gemm_text,
    get_gemm,
    parse_gemms,
    read_gemm_file,
)

SEQ4 = ((0, 1), (4, 2), (5, 3))


def test_every_built_in_reads_back_from_its_own_text() -> None:
    assert parse_gemms(gemm_text(*GEMMS.values())) == tuple(GEMMS.values())
    assert get_gemm("vllm_cpp") is GEMMS["vllm_cpp"] and (GEMMS["vllm_cpp"].k_multiple == 16)


def test_a_declaration_with_classes_reads_back(tmp_path) -> None:
    decl = GemmDeclaration(
        "mine", accumulation="inferred", products="rounded", scales="operands",
        classes=(TreeClass((2, 3, 4), "0:*", SEQ4, family="sequential"),
                 TreeClass((2, 3, 4), "1:*", ((0, 1), (2, 3), (4, 5)), "fused")),
    )  # fmt: skip
    path = tmp_path / "g.toml"
    path.write_text(gemm_text(decl))
    (back,) = read_gemm_file(path)
    assert back == decl and back.shapes == ((2, 3, 4),)
    assert back.classes[1].positions() == [(1, 0), (1, 1), (1, 2)]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"scales": "middle"}, "scales = 'middle'"),
        ({"accumulation": "inferred"}, "classes go with"),
        ({"intermediate": "exact", "scales": "product"}, "intermediate = exact"),
        ({"swap_max_m": 64}, "swap_max_m"),
        ({"scales": "none", "a_scale": "row"}, "no granularity"),
        ({"scales": "product", "products": "fused"}, "products = exact"),
        ({"outputs": ("f8",)}, "outputs"),
        ({"k_multiple": 0}, "k_multiple"),
    ],
)
def test_a_contradiction_is_refused_by_name(change: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        dataclasses.replace(GEMMS["vllm_cpp"], **change)  # type: ignore[arg-type]


def test_classes_must_cover_each_shape_once() -> None:
    with pytest.raises(ValueError, match="leave outputs out"):
        GemmDeclaration("x", accumulation="inferred", classes=(TreeClass((2, 3, 4), "0:*", SEQ4),))
    with pytest.raises(ValueError, match="two classes"):
        GemmDeclaration(
            "x", accumulation="inferred",
            classes=(TreeClass((1, 1, 4), "all", SEQ4), TreeClass((1, 1, 4), "0,0", SEQ4)),
        )  # fmt: skip
    with pytest.raises(ValueError, match="3 nodes"):
        TreeClass((1, 1, 4), "all", ((0, 1),))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[rule]]\nname = 'x'\n", "want one or more"),
        ("[[gemm]]\nname = 'x'\ncolour = 1\n", "unknown key 'colour'"),
        ("[[gemm]]\nname = 'x'\nk_multiple = 1.5\n", "not a whole number"),
        ("[[gemm]]\nname = 'x'\n[[gemm]]\nname = 'x'\n", "given twice"),
        (
            "[[gemm]]\nname = 'x'\naccumulation = 'inferred'\n[[gemm.classes]]\nshape = [1, 1]\n"
            "outputs = 'all'\nnodes = []\n",
            "shape = ",
        ),
        ("not toml [", "not TOML"),
    ],
)
def test_a_bad_file_is_refused_with_its_reason(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_gemms(text, "f.toml")


def test_a_gemm_file_is_bounded_like_a_rule_file(tmp_path: Path) -> None:
    """A deeply nested GEMM file is one error, not a RecursionError; a FIFO is refused, not read."""
    import os

    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 50_000 + "1" + "]" * 50_000 + "\n")
    with pytest.raises(ValueError, match="nested deeper than 64"):
        read_gemm_file(deep)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO, not a regular file; a GEMM file"):
        read_gemm_file(fifo)
