"""Evidence: append-only run directories with manifests and provenance."""

from fp8lab.evidence.provenance import code_hash, git_state, provenance
from fp8lab.evidence.run_dir import MANIFEST, EvidenceRun, params_hash

__all__ = [
    "MANIFEST",
    "EvidenceRun",
    "code_hash",
    "git_state",
    "params_hash",
    "provenance",
]
