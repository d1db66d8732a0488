"""The gate_g1 notebook's host-built CUDA part: what G2h must show, and the conversion facts.

Both need g++ and the CUDA headers (the ``cuda-host`` extra). Without them
G2h is PENDING having compared nothing, and no conversion fact is checked;
each says why, naming the install line. A compile error stays a FAIL.
"""

from __future__ import annotations

from fp8lab.cuda.facts import ConversionFact, check_conversion_facts
from fp8lab.cuda.host_build import CudaHostBuildError
from fp8lab.gates.records import GateResult, GateStatus

__all__ = ["conversion_facts", "g2h_unexpected"]


def g2h_unexpected(result: GateResult) -> list[str]:
    """What in a G2h record is not as expected (empty: as expected).

    Expected: PASS having compared words, with every -NaN giving 0x7F (the
    header's host path canonicalises NaN first), or PENDING having compared
    nothing, with its reason. Never FAIL.
    """
    if result.status is GateStatus.PENDING:
        if result.words == 0 and result.reason:
            return []
        return [f"PENDING after {result.words} words, reason {result.reason!r}"]
    if result.status is not GateStatus.PASS or result.words == 0:
        return [f"{result.status.value} on {result.words} words: {result.reason}"]
    nan = {k: result.measured.get(k) for k in ("nan->signed", "nan->canonical")}
    if nan["nan->signed"] != 0 or not nan["nan->canonical"]:
        return [f"host NaN codes {nan}: expected every NaN canonical (-NaN -> 0x7F)"]
    return []


def conversion_facts() -> tuple[list[ConversionFact], str]:
    """Each conversion fact checked against the installed header, and why none were.

    Returns:
        The facts and "", or no facts and why not (the install line) where the
        CUDA headers are absent.
    """
    try:
        return check_conversion_facts(), ""
    except CudaHostBuildError as exc:
        if not exc.missing:
            raise
        return [], str(exc)
