"""Benchmarks: throughput and costs as ratios measured in one run; never asserted in tests."""
