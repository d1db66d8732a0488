"""Dumped outputs: export a gate's inputs, check outputs a kernel wrote anywhere.

``fp8lab export`` writes a bundle (schema ``fp8lab.bundle/1``); the user's
runner writes the outputs; ``fp8lab gates --outputs DIR`` checks them through
a kernel that serves the recorded bytes, so the gates run unchanged. Which
gates have bundles, and their format, is each gate's record (:mod:`fp8lab.specs.gates`).
"""

from fp8lab.bundle.cases import SCHEMA, BundleCase, population_sha256
from fp8lab.bundle.export import BundleExistsError, bundle_cases, sidecar_text, write_bundle
from fp8lab.bundle.files import BundleCaseError, BundleError
from fp8lab.bundle.replay import (
    BundleMatmulKernel,
    BundleQuantKernel,
    load_bundle,
)

__all__ = [
    "SCHEMA",
    "BundleCase",
    "BundleCaseError",
    "BundleError",
    "BundleExistsError",
    "BundleMatmulKernel",
    "BundleQuantKernel",
    "bundle_cases",
    "load_bundle",
    "population_sha256",
    "sidecar_text",
    "write_bundle",
]
