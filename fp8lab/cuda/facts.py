"""Host-vs-device conversion facts, each checked against the cuda_fp8.hpp installed here.

On sm_89+ under SATFINITE ``__nv_cvt_float_to_fp8``
is one PTX instruction; everywhere else (the host, older devices, NOSAT) it
canonicalises NaN and rounds in software through double.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fp8lab.cuda.host_build import cuda_include_dirs

__all__ = ["CONVERSION_FACTS", "ConversionFact", "check_conversion_facts"]


@dataclass(frozen=True)
class ConversionFact:
    """One fact: where it applies, what it means, and the header text that says so."""

    path: str
    behaviour: str
    header_text: str
    in_header: bool = False


CONVERSION_FACTS = (
    ConversionFact(
        "device, sm_89+, __NV_SATFINITE",
        "one instruction; NaN gives a NaN code (sign not specified by PTX: G2 measures it)",
        "cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;",
    ),
    ConversionFact(
        "host, pre-sm_89, or __NV_NOSAT",
        "NaN is canonicalised to +NaN first, so -NaN gives 0x7F (G2h checks it)",
        "xbits = 0x7FFFFFFFU;",
    ),
    ConversionFact(
        "host (software) path",
        "|x| > 464 gives 0x7E under SATFINITE, 0x7F (NaN) under NOSAT",
        "0x407D000000000000ULL",
    ),
    ConversionFact(
        "host (software) path",
        "|x| <= 2^-10 gives a signed zero: the tie at 2^-10 goes to even (0)",
        "FP8_MINDENORM_O2 = 0x3F50000000000000ULL",
    ),
)


def check_conversion_facts(include_dirs: Sequence[Path] | None = None) -> list[ConversionFact]:
    """Each fact with ``in_header`` set by searching the installed cuda_fp8.hpp.

    Raises:
        fp8lab.cuda.CudaHostBuildError: when the headers are not installed.
    """
    dirs = cuda_include_dirs() if include_dirs is None else include_dirs
    header = next(d / "cuda_fp8.hpp" for d in dirs if (d / "cuda_fp8.hpp").is_file())
    text = header.read_text(encoding="utf-8")
    return [
        ConversionFact(f.path, f.behaviour, f.header_text, f.header_text in text)
        for f in CONVERSION_FACTS
    ]
