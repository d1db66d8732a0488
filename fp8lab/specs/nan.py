"""The one catalogue of NaN policies: the codes an encoder or a kernel emits for a NaN input.

A NaN input has no rounding answer, so each implementation picks a code. Every
policy here is named for what it does and cites the implementations that do
it. The codecs take the policies that emit a NaN code (``canonical``,
``keep-sign``, ``all-ones``, ``keep-sign-all-ones``); a kernel under test may
declare any of them. A name is
resolved once, where it enters (a ``--nan-policy``, a kernel's declared
``nan_policy`` attribute, an ``encode(..., nan=)`` argument), and passed on as
an argument. No other name, and no raw code, is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fp8lab.specs.format import FormatSpec

__all__ = [
    "DEFAULT_NAN_POLICY",
    "NAN_POLICIES",
    "NanPolicy",
    "declared_nan_policy",
    "nan_policy",
    "nan_policy_help",
    "resolve_nan_policy",
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


def nan_policy_help() -> str:
    """One line naming the policies and how a kernel declares one."""
    return (
        f"declare the kernel's NaN policy with attribute nan_policy = NAME on the kernel "
        f"or function, or --nan-policy NAME; NAME one of {', '.join(NAN_POLICIES)}"
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


def resolve_nan_policy(kernel: object, stated: str | None) -> str:
    """``stated`` (a caller's ``--nan-policy``) checked against what ``kernel`` declares.

    Raises:
        ValueError: as :func:`declared_nan_policy`, for an unknown ``stated``, or
            when the kernel declares a different policy than ``stated``.
    """
    declared = declared_nan_policy(kernel)
    if stated is None:
        return declared
    nan_policy(stated)
    if getattr(kernel, "nan_policy", None) is not None and declared != stated:
        raise ValueError(f"the kernel declares NaN policy {declared!r}, not {stated!r}")
    return stated
