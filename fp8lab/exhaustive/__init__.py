"""Exhaustive proofs over all 2**32 float32 bit patterns."""

from fp8lab.exhaustive.chunks import ChunkResult, compare_chunk, merge_chunks
from fp8lab.exhaustive.classify import MISMATCH_CLASSES, classify_mismatches
from fp8lab.exhaustive.encoders import BUILTIN_ENCODERS, Encoder, EncoderError, resolve_encoder
from fp8lab.exhaustive.runner import (
    ALL_PATTERNS,
    KERNEL_ERROR,
    KERNEL_ERROR_EXIT,
    ExhaustiveRecord,
    default_workers,
    proof_domain,
    run_exhaustive,
)

__all__ = [
    "ALL_PATTERNS",
    "BUILTIN_ENCODERS",
    "KERNEL_ERROR",
    "KERNEL_ERROR_EXIT",
    "MISMATCH_CLASSES",
    "ChunkResult",
    "Encoder",
    "EncoderError",
    "ExhaustiveRecord",
    "classify_mismatches",
    "compare_chunk",
    "default_workers",
    "merge_chunks",
    "proof_domain",
    "resolve_encoder",
    "run_exhaustive",
]
