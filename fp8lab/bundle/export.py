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

from fp8lab.bundle.cases import (
    BUNDLE_GATES,
    SCHEMA,
    BundleCase,
    f32_hex,
    g1_bundle_cases,
    g3_bundle_cases,
    population_sha256,
)
from fp8lab.bundle.gq import gq_bundle_cases, gq_head, gq_sidecar_line

__all__ = [
    "BundleExistsError",
    "bundle_cases",
    "bundle_document",
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


def bundle_document(
    gate: str, cases: list[BundleCase], scheme: str | None = None, rule: str | None = None
) -> dict[str, Any]:
    """The ``bundle.json`` content for ``cases`` of ``gate`` (GQ: with its scheme and rule)."""
    named = {"scheme": scheme, "rule": rule} if gate == "GQ" else {}
    return {
        "schema": SCHEMA,
        "gate": gate,
        **named,
        "fp8lab_version": _version(),
        "population_sha256": population_sha256(cases, gq_head(scheme, rule) if named else ""),
        "cases": [c.entry for c in cases],
    }


def bundle_cases(gate: str, scheme: str | None = None, rule: str | None = None) -> list[BundleCase]:
    """This version's cases of ``gate`` (GQ: for ``scheme`` under ``rule``), in the gate's order.

    Raises:
        ValueError: for another gate, or GQ without a valid scheme and rule.
    """
    if gate == "G1":
        return g1_bundle_cases()
    if gate == "G3":
        return g3_bundle_cases()
    if gate == "GQ":
        if scheme is None or rule is None:
            raise ValueError("a GQ bundle is for one scheme and rule: name both")
        return gq_bundle_cases(scheme, rule)
    raise ValueError(f"bundles hold {', '.join(BUNDLE_GATES)}, not {gate!r}")


def _sidecar_line(entry: dict[str, Any]) -> str:
    if "codes" in entry:
        return gq_sidecar_line(entry)
    if "scale_hex" in entry:
        fields = [entry[f] for f in ("scale_hex", "input_dtype", "count", "input", "output")]
    else:
        fields = [entry[f] for f in ("m", "n", "k", "a", "b")]
        fields += [f32_hex(entry["s_in"]), f32_hex(entry["s_w"]), entry["out_dtype"]]
        fields.append(entry["output"])
    return " ".join(str(f) for f in [*fields, entry["name"]])


def sidecar_text(document: dict[str, Any]) -> str:
    """``bundle.txt``: a header line ``SCHEMA GATE N``, then one line per case.

    G1: ``scale_hex input_dtype count input output name``; G3: ``m n k a b
    s_in_hex s_w_hex out_dtype output name``; GQ: ``input_dtype m k
    global_amax_hex input codes scales scales_dtype scales_count name`` (``-``
    for no global amax), its header ``SCHEMA GQ N SCHEME RULE``. The name is the rest of the line.
    """
    cases = document["cases"]
    head = f"{document['schema']} {document['gate']} {len(cases)}"
    if document["gate"] == "GQ":
        head += f" {document['scheme']} {document['rule']}"
    return "\n".join([head, *(_sidecar_line(c) for c in cases)]) + "\n"


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
