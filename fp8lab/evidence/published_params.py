"""How a run's parameters differ from the published ones: a notebook's defaults, or all 2**32."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fp8lab.evidence.manifest import RunRecord
from fp8lab.evidence.parameters import ParameterError, declared_parameters, non_default
from fp8lab.sweeps.range_run import ALL_PATTERNS

__all__ = [
    "PROOFS",
    "PROOFS_MX",
    "PROOF_KINDS",
    "differs_for",
    "notebook_differs",
    "proof_kinds",
    "proofs_differ",
]

PROOFS = "proofs"
PROOFS_MX = "proofs-mx"  # fp8lab prove --plan mx
PROOF_KINDS = (PROOFS, PROOFS_MX)


def notebook_differs(path: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """How a run's parameters differ from the notebook's declared defaults, ``smoke`` false."""
    try:
        defaults = {n: d.default for n, d in declared_parameters(path).items()}
    except ParameterError:
        defaults = {}

    def differs(params: dict[str, Any]) -> dict[str, Any]:
        changed = non_default(params, defaults)
        if params.get("smoke"):
            changed["smoke"] = params["smoke"]
        return changed

    return differs


def proofs_differ(params: dict[str, Any]) -> dict[str, Any]:
    """How a proofs run differs from one over all 2**32 patterns (``{}``: it does not)."""
    return {} if params.get("stop") == ALL_PATTERNS else {"stop": params.get("stop")}


def differs_for(
    kind: str, notebooks: dict[str, Path]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """How a run of ``kind`` differs from its published parameters (``{}``: it does not).

    A kind that is neither a notebook nor a proofs kind has no defaults to differ from.
    """
    if kind in notebooks:
        return notebook_differs(notebooks[kind])
    if kind in PROOF_KINDS:
        return proofs_differ
    return lambda params: {}


def proof_kinds(proofs: bool | Sequence[str], by_kind: dict[str, list[RunRecord]]) -> list[str]:
    """The proofs kinds to check: as named, or ``proofs`` and any other one ever attempted."""
    if not isinstance(proofs, bool):
        return list(proofs)
    if not proofs:
        return []
    tried = {
        kind
        for kind in PROOF_KINDS
        for r in by_kind.get(kind, [])
        if r.manifest["status"] != "partial" and not proofs_differ(r.manifest["params"])
    }
    return [k for k in PROOF_KINDS if k == PROOFS or k in tried]
