"""A source mutation's ``original`` is the first line of its site's source segment.

``source_mutations`` splits the module's text once and cuts each site's first
line by its offsets; ``ast.get_source_segment`` (which splits the whole text
again for every site) is the slow twin it must equal, site for site.
"""

from __future__ import annotations

import ast

import pytest

from fp8lab.mutants import source
from fp8lab.mutants.runner import SOURCE_MODULES

MODULES = sorted({*SOURCE_MODULES, "fp8lab.refs.scan", "fp8lab.codecs.rne_bits"})


def _by_segment(module: str) -> list[str]:
    tree, text = source.parse_module(module)
    return [
        (ast.get_source_segment(text, node) or ast.unparse(node)).splitlines()[0]
        for sites, _ in source.OPERATORS.values()
        for node in sites(tree)
    ]


@pytest.mark.parametrize("module", MODULES)
def test_each_original_is_the_first_line_of_its_segment(module: str) -> None:
    found = source.source_mutations(module)
    assert [m.original for m in found] == _by_segment(module)
    assert found == source.source_mutations(module)  # the cached list, unchanged by a caller
    found.clear()
    assert source.source_mutations(module)


def test_a_planted_offset_is_caught() -> None:
    tree, text = source.parse_module("fp8lab.refs.scan")
    lines = text.splitlines(keepends=True)
    sites, _ = source.OPERATORS["swap_mul_div"]
    node = next(iter(sites(tree)))
    assert isinstance(node, ast.BinOp)
    want = (ast.get_source_segment(text, node) or "").splitlines()[0]
    assert source._first_line(lines, node) == want
    node.col_offset += 1  # the planted defect: one byte late
    assert source._first_line(lines, node) != want
