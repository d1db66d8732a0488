"""Populations of input words, labelled by class."""

from fp8lab.populations.g1 import (
    G1_SEED,
    G1_SPECIAL_WORDS,
    G1_WORDS,
    g1_population,
    g1_structured_values,
)
from fp8lab.populations.words import Population, WordClass

__all__ = [
    "G1_SEED",
    "G1_SPECIAL_WORDS",
    "G1_WORDS",
    "Population",
    "WordClass",
    "g1_population",
    "g1_structured_values",
]
