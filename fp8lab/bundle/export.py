"""Write a bundle: ``bundle.json``, the line-oriented ``bundle.txt`` and the input files.

The directory is built in a staging sibling and renamed into place, so a
bundle is either complete or absent; an existing non-empty directory is
refused (evidence is never overwritten). ``outputs/`` is created empty for
the user's runner to fill. Schema and sidecar: docs/bundles.md.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fp8lab.bundle.cases import SCHEMA, BundleCase, population_sha256
from fp8lab.bundle.format import BundleFormat
from fp8lab.specs.gates import GATES, bundle_gates, load

__all__ = [
    "BundleExistsError",
    "bundle_cases",
    "bundle_document",
    "bundle_format",
    "sidecar_text",
    "write_bundle",
]


class BundleExistsError(FileExistsError):
    """The target directory exists and is not empty."""


def _version() -> str:
    try:
        return importlib.metadata.version("fp8lab")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def bundle_format(gate: str) -> BundleFormat:
    """The bundle format of ``gate``, from its record.

    Raises:
        ValueError: for a gate that has no bundle.
    """
    if gate not in GATES or not GATES[gate].bundle:
        raise ValueError(f"bundles hold {', '.join(bundle_gates())}, not {gate!r}")
    found: BundleFormat = load(GATES[gate].bundle)
    return found


def _named(fmt: BundleFormat, scheme: str | None, rule: str | None) -> dict[str, Any]:
    given = {"scheme": scheme, "rule": rule}
    return {k: given[k] for k in fmt.keys}


def bundle_document(
    gate: str, cases: list[BundleCase], scheme: str | None = None, rule: str | None = None
) -> dict[str, Any]:
    """The ``bundle.json`` content for ``cases`` of ``gate`` (GQ: with its scheme and rule)."""
    fmt = bundle_format(gate)
    named = _named(fmt, scheme, rule)
    return {
        "schema": SCHEMA,
        "gate": gate,
        **named,
        "fp8lab_version": _version(),
        "population_sha256": population_sha256(cases, fmt.head(named)),
        "cases": [c.entry for c in cases],
    }


def bundle_cases(gate: str, scheme: str | None = None, rule: str | None = None) -> list[BundleCase]:
    """This version's cases of ``gate`` (GQ: for ``scheme`` under ``rule``), in the gate's order.

    Raises:
        ValueError: for another gate, or GQ without a valid scheme and rule.
    """
    fmt = bundle_format(gate)
    named = _named(fmt, scheme, rule)
    missing = [k for k, v in named.items() if v is None]
    if missing:
        raise ValueError(f"a {gate} bundle is for one {' and '.join(fmt.keys)}: name each")
    return fmt.cases(**named)


def sidecar_text(document: dict[str, Any]) -> str:
    """``bundle.txt``: a header line ``SCHEMA GATE N`` (then the bundle's keys), one line per case.

    G1: ``scale_hex input_dtype count input output name``; G3: ``m n k a b
    s_in_hex s_w_hex out_dtype output name``; GQ: ``input_dtype m k
    global_amax_hex input codes scales scales_dtype scales_count name`` (``-``
    for no global amax), its header ``SCHEMA GQ N SCHEME RULE``. The name is the rest of the line.
    """
    fmt = bundle_format(document["gate"])
    cases = document["cases"]
    head = " ".join(
        [document["schema"], document["gate"], str(len(cases)), *(document[k] for k in fmt.keys)]
    )
    return "\n".join([head, *(fmt.sidecar_line(c) for c in cases)]) + "\n"


def write_bundle(
    gate: str, out: Path, scheme: str | None = None, rule: str | None = None
) -> dict[str, Any]:
    """Export ``gate``'s cases (GQ: for ``scheme`` under ``rule``) into the new directory ``out``.

    Returns:
        The bundle.json document.

    Raises:
        BundleExistsError: if ``out`` exists and is not an empty directory.
        ValueError: for a gate that has no bundle, or GQ without a valid scheme and rule.
        OSError: if the directory cannot be written.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BundleExistsError(f"{out} exists and is not empty; a bundle is never overwritten")
    cases = bundle_cases(gate, scheme, rule)
    document = bundle_document(gate, cases, scheme, rule)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        (staging / "inputs").mkdir()
        (staging / "outputs").mkdir()
        for case in cases:
            for field, array in case.inputs.items():
                (staging / case.entry[field]).write_bytes(array.tobytes())
        (staging / "bundle.json").write_text(json.dumps(document, indent=2) + "\n")
        (staging / "bundle.txt").write_text(sidecar_text(document))
        os.chmod(staging, 0o777 & ~_umask())
        os.rename(staging, out)  # onto an absent or empty directory only
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if out.exists() and any(out.iterdir()):
            raise BundleExistsError(f"{out} is not empty; a bundle is never overwritten") from exc
        raise
    return document


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
