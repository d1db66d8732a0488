"""The one catalogue of NaN policies: the codes an encoder or a kernel emits for a NaN input.

A NaN input has no rounding answer, so each implementation picks a code. Every
policy here is named for what it does and cites the implementations that do
it. The codecs take the policies that emit a NaN code (``canonical``,
``keep-sign``, ``all-ones``, ``keep-sign-all-ones``); a kernel under test may
declare any of them. A name is
resolved once, where it enters (a ``--nan-policy``, the ``nan_policy``
attribute of a kernel in the caller's own process, an ``encode(..., nan=)``
argument), and passed on as an argument: a gate holds a kernel to a
:class:`HeldNanPolicy`, which says where the policy came from. What a kernel
in a process of its own declares is recorded beside it, never used. No other
name, and no raw code, is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fp8lab.specs.format import FormatSpec

__all__ = [
    "DEFAULT_NAN_POLICY",
    "NAN_POLICIES",
    "NAN_POLICY_SOURCES",
    "HeldNanPolicy",
    "NanPolicy",
    "declared_nan_policy",
    "held_nan_policy",
    "nan_policy",
    "nan_policy_help",
]


@dataclass(frozen=True)
class NanPolicy:
    """What an encoder or kernel emits for a NaN input, and which implementations do so.

    Args:
        name: the fixed name callers give and records carry.
        to_max: NaN becomes the largest finite magnitude (a clamp that ignores
            NaN), else a NaN code of the format.
        sign: ``"+"`` or ``"-"`` for a fixed sign, ``"input"`` to keep the
            input's where the format has a code for it.
        source: the implementations it comes from, with their citations.
        all_ones: the NaN code has every magnitude bit set (e5m2's 0x7F) where
            that code is a NaN of the format, else the canonical code's magnitude.
    """

    name: str
    to_max: bool
    sign: Literal["+", "-", "input"]
    source: str
    all_ones: bool = False

    def codes(self, fmt: FormatSpec) -> tuple[int, int]:
        """The codes for a +NaN and a -NaN input in ``fmt``.

        Raises:
            ValueError: for a NaN code in a format without one.
        """
        base = fmt.max_code if self.to_max else fmt.canonical_nan_code
        if base is None:
            raise ValueError(f"{fmt.name} has no NaN code")
        if self.all_ones and fmt.is_nan_code(fmt.magnitude_mask):
            base = fmt.magnitude_mask
        neg = base | fmt.sign_bit
        if not self.to_max and not fmt.is_nan_code(neg):
            neg = base  # the format has no negative NaN code
        return {"+": (base, base), "-": (neg, neg), "input": (base, neg)}[self.sign]


NAN_POLICIES: dict[str, NanPolicy] = {
    p.name: p
    for p in (
        NanPolicy(
            "canonical",
            to_max=False,
            sign="+",
            source="the format's positive quiet NaN, sign dropped: vllm.cpp CPU "
            "QuantFp8Static's encoder F32ToFp8 step 1 (NaN -> 0x7F) and "
            "CUDA's cuda_fp8.h host conversion",
        ),
        NanPolicy(
            "keep-sign",
            to_max=False,
            sign="input",
            source="ml_dtypes astype(float8_e4m3fn) and torch's CPU cast: NaN keeps its "
            "sign, -NaN -> 0xFF",
        ),
        NanPolicy(
            "all-ones",
            to_max=False,
            sign="+",
            all_ones=True,
            source="every magnitude bit set, sign dropped: PTX cvt.rn.satfinite.e5m2x2.f32 "
            "(NaN -> 0x7F in e5m2 on an H200, measured by scripts/gpu-check); in e4m3fn "
            "the same code as canonical",
        ),
        NanPolicy(
            "keep-sign-all-ones",
            to_max=False,
            sign="input",
            all_ones=True,
            source="every magnitude bit set, the input's sign kept: torch 2.13's CPU cast "
            "to float8_e5m2 (NaN -> 0x7F, -NaN -> 0xFF); in e4m3fn the same codes as keep-sign",
        ),
        NanPolicy(
            "clamp-pos",
            to_max=True,
            sign="+",
            source="upstream vLLM CUDA static per-tensor quant, fmaxf(-448, fminf(x, 448)): "
            "fminf ignores NaN, so NaN -> +448 = 0x7E",
        ),
        NanPolicy(
            "clamp-neg",
            to_max=True,
            sign="-",
            source="vLLM per-token-group quant, fminf(fmaxf(x, -448), 448): fmaxf ignores "
            "NaN, so NaN -> -448 = 0xFE",
        ),
    )
}
DEFAULT_NAN_POLICY = "canonical"


NAN_POLICY_SOURCES = ("command-line", "kernel-source", "default", "caller", "kernel")
_SHOWN = 80  # characters of a kernel's declaration a record keeps


@dataclass(frozen=True)
class HeldNanPolicy:
    """The NaN policy a gate holds a kernel to, where it came from, and what the kernel says.

    Args:
        policy: the policy the gate holds the kernel to.
        source: ``command-line`` (``--nan-policy``), ``kernel-source`` (a
            ``nan_policy`` declaration in the ``--kernel``'s source text, read as
            text before the kernel runs), ``default`` (none stated: canonical),
            ``caller`` (a Python caller passed it) or ``kernel`` (the
            ``nan_policy`` attribute of a kernel in the caller's process).
        declared_by_kernel: what a kernel that runs in a process of its own says
            of itself (its ``nan_policy`` attribute, as that process reports it):
            recorded and compared, never used; None if it says nothing or was not asked.

    Raises:
        ValueError: for a source outside :data:`NAN_POLICY_SOURCES`.
    """

    policy: NanPolicy
    source: str
    declared_by_kernel: str | None = None

    def __post_init__(self) -> None:
        if self.source not in NAN_POLICY_SOURCES:
            raise ValueError(f"NaN policy source {self.source!r}; one of {NAN_POLICY_SOURCES}")
        if self.declared_by_kernel is not None:
            object.__setattr__(self, "declared_by_kernel", str(self.declared_by_kernel)[:_SHOWN])

    @property
    def disagreement(self) -> str:
        """A sentence when the kernel declares a policy other than the one held; else empty."""
        said = self.declared_by_kernel
        if said is None or said == self.policy.name:
            return ""
        return (
            f"the kernel declares NaN policy {said!r} but was held to {self.policy.name!r} "
            f"({self.source}): a --kernel is held to --nan-policy or its source's declaration, "
            "never to what its process reports"
        )


def nan_policy_help() -> str:
    """One line naming the policies and how a kernel's is stated."""
    return (
        f"state the kernel's NaN policy with --nan-policy NAME (a --kernel), or, for a "
        f"kernel in your own process, with attribute nan_policy = NAME on the kernel or "
        f"function; NAME one of {', '.join(NAN_POLICIES)}"
    )


def nan_policy(value: str | NanPolicy) -> NanPolicy:
    """The catalogue's policy named ``value`` (a policy is returned as it is).

    Raises:
        ValueError: for a name outside :data:`NAN_POLICIES`.
    """
    if isinstance(value, NanPolicy) and NAN_POLICIES.get(value.name) == value:
        return value
    if not isinstance(value, str) or value not in NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {value!r}; {nan_policy_help()}")
    return NAN_POLICIES[value]


def declared_nan_policy(kernel: object) -> str:
    """The policy name ``kernel`` declares (its ``nan_policy`` attribute); canonical if none.

    Raises:
        ValueError: for a name outside :data:`NAN_POLICIES`.
    """
    named = getattr(kernel, "nan_policy", None)
    return DEFAULT_NAN_POLICY if named is None else nan_policy(named).name


def held_nan_policy(kernel: object, stated: HeldNanPolicy | NanPolicy | None) -> HeldNanPolicy:
    """The policy a gate holds ``kernel`` to: ``stated``, else what the kernel declares.

    The edge of a gate's Python API, read once: a policy the caller passes is
    held (``caller``); with none, the ``nan_policy`` attribute of ``kernel``,
    an object in this process (``kernel``), else canonical (``default``).

    Raises:
        ValueError: for a declared name outside :data:`NAN_POLICIES`, or a
            ``stated`` that is neither a policy of the catalogue nor a held one.
    """
    if isinstance(stated, HeldNanPolicy):
        return stated
    if stated is not None:
        if not isinstance(stated, NanPolicy):
            raise ValueError(f"nan_policy={stated!r} is not a NaN policy: pass NAN_POLICIES[NAME]")
        return HeldNanPolicy(nan_policy(stated), "caller")
    if getattr(kernel, "nan_policy", None) is None:
        return HeldNanPolicy(NAN_POLICIES[DEFAULT_NAN_POLICY], "default")
    return HeldNanPolicy(NAN_POLICIES[declared_nan_policy(kernel)], "kernel")
