"""Specs: what is checked, as declarations (standard library and fractions only)."""
