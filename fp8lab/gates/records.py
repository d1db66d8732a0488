"""Gate results as records: enum outcomes, counts of what was examined, JSON."""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from fp8lab.populations.split_record import AxisSplit
from fp8lab.runtime.exit_codes import EXIT_CODES

__all__ = [
    "MutantVerdict",
    "ProofStatus",
    "EXIT_CODES",
    "CaseResult",
    "GateResult",
    "GateStatus",
    "Offender",
    "exit_code",
    "mostly_zero",
    "screen",
]


class GateStatus(enum.Enum):
    """PASS and FAIL are verdicts; PENDING is owed and could not run here."""

    PASS = "PASS"
    FAIL = "FAIL"
    PENDING = "PENDING"


class ProofStatus(enum.StrEnum):
    """An exhaustive proof's outcome; ``kernel-error``: an encoder raised or returned garbage."""

    PASS = "PASS"
    FAIL = "FAIL"
    KERNEL_ERROR = "kernel-error"


class MutantVerdict(enum.Enum):
    """What the gates made of a mutant (Cosmic Ray's outcomes)."""

    KILLED = "KILLED"
    SURVIVED = "SURVIVED"
    INCOMPETENT = "INCOMPETENT"


@dataclass(frozen=True)
class Offender:
    """One disagreeing word: where it sat and what each side emitted.

    ``input_hex`` is the input word's bit pattern in hex, in the input's own
    width (``0xc02ad8f1`` a float32, ``0xc02b`` a bfloat16); a kernel call
    with several inputs names each (GQ nvfp4: ``x=0x... global_scale=0x...``).
    An offender that is no input word names its output position instead
    (``out[i,j]`` for G3 and GF, ``scale[j]`` for a GQ scale).
    """

    case: str
    word_class: str
    index: int
    input_hex: str
    got: str
    want: str

    def where(self) -> str:
        """How a report line names it: ``word I x=HEX``, or its output position alone."""
        if self.input_hex.endswith("]"):
            return self.input_hex
        named = "=" in self.input_hex
        return f"word {self.index} {self.input_hex if named else 'x=' + self.input_hex}"


@dataclass(frozen=True)
class CaseResult:
    """One case of a gate: a scale and input dtype, for G1.

    ``nan_input_mismatches`` counts NaN inputs whose code is not the policy's.
    """

    name: str
    words: int
    assertions: int
    assertions_failed: int
    mismatches: int
    nan_code_mismatches: int
    nonzero_fraction: float
    error: str = ""
    nan_input_mismatches: int = 0


@dataclass(frozen=True)
class GateResult:
    """What a gate examined, what it found and its verdict.

    ``nan_policy`` is the fixed name of the NaN policy the gate held the
    kernel to (``fp8lab.specs.nan``); None for a gate that checks none.
    ``nan_policy_source`` says where that policy came from (``command-line``,
    ``default``, ``caller`` or ``kernel``: :class:`fp8lab.specs.nan.HeldNanPolicy`);
    ``nan_policy_declared_by_kernel`` what a kernel run in a process of its own
    declared (recorded and compared, never used; None: nothing, or not asked).
    ``scope`` says what a PASS proves and what it does not (G2, G2h);
    ``measured`` holds the named values a gate observes beside its verdict
    (G2, G2h: what NaN patterns became, the device's compute capability; GF:
    the chain, the recipe, the first failing step, the steps checked and the
    standalone-vs-recipe byte difference; docs/gates/gf.md).
    ``scheme`` and ``rule`` name what GQ checked; G1 names its static ``rule``
    (no scheme); None for the other gates.
    ``fp_env_changed`` says what a kernel run in its own process left changed in
    the floating-point environment (``""``: nothing, or not measured);
    ``fp_env_read`` how that was read: ``ptrace`` (from outside the kernel's
    process) or ``self-reported`` (what the process said; ``""``: in-process).
    ``isolation`` is how the kernel's process was isolated: ``namespace`` (its
    own namespaces), ``process`` (a child process only), ``""`` for fp8lab's
    own kernels, which run in fp8lab's process.
    ``splits`` (GQ, scale rules) is the rule's split table: for each axis value
    ``R[A=v]``, whether GQ's population splits it from the rule, at which amaxes,
    or why it cannot (:class:`fp8lab.populations.rule_splits.AxisSplit`).
    """

    gate: str
    kernel: str
    status: GateStatus
    reason: str
    cases: int
    assertions: int
    assertions_failed: int
    words: int
    mismatches: int
    nan_code_mismatches: int
    mismatches_by_class: dict[str, int] = field(default_factory=dict)
    first_offenders: tuple[Offender, ...] = ()
    case_results: tuple[CaseResult, ...] = ()
    nan_policy: str | None = None
    nan_policy_source: str | None = None
    nan_policy_declared_by_kernel: str | None = None
    scope: str = ""
    measured: dict[str, Any] = field(default_factory=dict)
    scheme: str | None = None
    rule: str | None = None
    fp_env_changed: str = ""
    splits: tuple[AxisSplit, ...] = ()
    fp_env_read: str = ""
    isolation: str = ""

    @classmethod
    def from_cases(
        cls,
        gate: str,
        kernel: str,
        status: GateStatus,
        reason: str,
        cases: Sequence[CaseResult],
        **fields: Any,
    ) -> GateResult:
        """The record whose counts are the sums over ``cases`` (kept as ``case_results``)."""
        return cls(
            gate=gate,
            kernel=kernel,
            status=status,
            reason=reason,
            cases=len(cases),
            assertions=sum(c.assertions for c in cases),
            assertions_failed=sum(c.assertions_failed for c in cases),
            words=sum(c.words for c in cases),
            mismatches=sum(c.mismatches for c in cases),
            nan_code_mismatches=sum(c.nan_code_mismatches for c in cases),
            case_results=tuple(cases),
            **fields,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; the status is its string value."""
        data = asdict(self)
        data["status"] = self.status.value
        return data

    def to_json(self) -> str:
        """Stable, indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def mostly_zero(cases: Sequence[CaseResult]) -> list[str]:
    """The cases whose reference is nonzero in at most half of the words (a vacuity guard)."""
    return [c.name for c in cases if c.nonzero_fraction <= 0.5]


def screen(
    cases: Sequence[CaseResult], *, vacuous: Sequence[str], what: str
) -> tuple[GateStatus, str] | None:
    """The FAIL every gate owes before it judges bytes, or None when there is none.

    In order: nothing examined (no case, or no word), a kernel error in any
    case (the first three are named), then the ``vacuous`` cases, whose
    reference output is degenerate in the way ``what`` says.
    """
    if not cases or sum(c.words for c in cases) == 0:
        return GateStatus.FAIL, "examined nothing"
    errors = [f"{c.name}: {c.error}" for c in cases if c.error]
    if errors:
        return GateStatus.FAIL, "; ".join(errors[:3])
    if vacuous:
        return GateStatus.FAIL, f"vacuous: {what} in {', '.join(vacuous)}"
    return None


def exit_code(results: list[GateResult]) -> int:
    """0 if every gate passed, 1 on any FAIL, 3 if the only non-pass is PENDING.

    Raises:
        ValueError: for an empty list (no gate ran, which is not a pass).
    """
    if not results:
        raise ValueError("no gate ran")
    statuses = {r.status for r in results}
    if GateStatus.FAIL in statuses:
        return EXIT_CODES["fail"]
    if GateStatus.PENDING in statuses:
        return EXIT_CODES["pending"]
    return EXIT_CODES["pass"]
