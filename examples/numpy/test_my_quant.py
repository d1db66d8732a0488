"""A kernel author's own pytest file: fp8lab's gate as one assertion.

Run it with ``pytest examples/numpy`` (``--fp8lab-results DIR`` files the records).
"""

import pytest
from my_quant import quant, quant_divide

from fp8lab.testing import assert_gate


def test_quant_passes_g1() -> None:
    """The natural kernel passes G1."""
    record = assert_gate("G1", quant)
    assert record.words > 0


def test_the_divide_twin_is_caught() -> None:
    """The divide twin fails G1: the assertion names it."""
    with pytest.raises(AssertionError, match=r"G1 quant_divide: FAIL"):
        assert_gate("G1", quant_divide)
