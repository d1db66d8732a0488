"""The closed set of NaN policies a quant kernel may declare, each from a real kernel.

A NaN input has no rounding answer, so each production kernel picks a code.
G1 checks the code of the policy a kernel declares by name and records that
name; an undeclared kernel is held to vllm.cpp's. The set is closed: no other
name, and no raw code, is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Literal

from fp8lab.formats import FormatSpec

__all__ = [
    "DEFAULT_NAN_POLICY",
    "NAN_POLICIES",
    "KernelNanPolicy",
    "declared_nan_policy",
    "resolve_nan_policy",
    "nan_policy_help",
]


@dataclass(frozen=True)
class KernelNanPolicy:
    """What a kernel emits for a NaN input, and which implementation does so.

    Args:
        name: the fixed name a kernel declares and records carry.
        to_max: NaN becomes the largest finite magnitude (a clamp that ignores
            NaN), else the format's NaN code.
        sign: ``"+"`` or ``"-"`` for a fixed sign, ``"input"`` to keep the input's.
        source: the implementation it comes from, with its citation.
    """

    name: str
    to_max: bool
    sign: Literal["+", "-", "input"]
    source: str

    def codes(self, fmt: FormatSpec) -> tuple[int, int]:
        """The codes for a +NaN and a -NaN input in ``fmt``.

        Raises:
            ValueError: for a NaN code in a format without one.
        """
        base = fmt.max_code if self.to_max else fmt.canonical_nan_code
        if base is None:
            raise ValueError(f"{fmt.name} has no NaN code")
        neg = base | fmt.sign_bit
        return {"+": (base, base), "-": (neg, neg), "input": (base, neg)}[self.sign]


NAN_POLICIES: dict[str, KernelNanPolicy] = {
    p.name: p
    for p in (
        KernelNanPolicy(
            "vllm-cpp",
            to_max=False,
            sign="+",
            source="vllm.cpp CPU QuantFp8Static, encoder F32ToFp8 step 1: NaN -> 0x7F, "
            "sign dropped (fp8-facts §3); also CUDA's cuda_fp8.h host conversion (§2)",
        ),
        KernelNanPolicy(
            "keep-sign",
            to_max=False,
            sign="input",
            source="ml_dtypes astype(float8_e4m3fn) and torch's CPU cast: NaN keeps its "
            "sign, -NaN -> 0xFF (fp8-facts §2)",
        ),
        KernelNanPolicy(
            "clamp-pos",
            to_max=True,
            sign="+",
            source="upstream vLLM CUDA static per-tensor quant, fmaxf(-448, fminf(x, 448)): "
            "fminf ignores NaN, so NaN -> +448 = 0x7E (fp8-facts §4)",
        ),
        KernelNanPolicy(
            "clamp-neg",
            to_max=True,
            sign="-",
            source="vLLM per-token-group quant, fminf(fmaxf(x, -448), 448): fmaxf ignores "
            "NaN, so NaN -> -448 = 0xFE (schemes-and-order §1)",
        ),
    )
}
DEFAULT_NAN_POLICY = "vllm-cpp"
_LEGACY_ATTR = "nan_input_code"


def nan_policy_help() -> str:
    """One line naming the policies and how a kernel declares one."""
    return (
        f"declare the kernel's NaN policy with attribute nan_policy = NAME on the kernel "
        f"or function, or --nan-policy NAME; NAME one of {', '.join(NAN_POLICIES)}"
    )


def _by_name(value: object) -> str:
    if not isinstance(value, str) or value not in NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {value!r}; {nan_policy_help()}")
    return value


def _by_legacy_code(code: object, fmt: FormatSpec) -> str:
    fixed = [p.name for p in NAN_POLICIES.values() if p.codes(fmt) == (code, code)]
    if isinstance(code, bool) or not isinstance(code, Integral) or not fixed:
        raise ValueError(
            f"{_LEGACY_ATTR}={code!r} names no documented NaN policy (a raw code is not "
            f"accepted); {nan_policy_help()}"
        )
    return fixed[0]  # one code per policy: at most one matches


def declared_nan_policy(kernel: object, fmt: FormatSpec) -> str:
    """The policy name ``kernel`` declares; vllm.cpp's if it declares none.

    The old numeric ``nan_input_code`` attribute is read only where it equals the
    single code of a named policy (0x7F, 0x7E, 0xFE in e4m3fn).

    Raises:
        ValueError: for a name outside :data:`NAN_POLICIES`, a numeric code no
            policy gives, or a name and a code that disagree.
    """
    named = getattr(kernel, "nan_policy", None)
    legacy = getattr(kernel, _LEGACY_ATTR, None)
    name = _by_name(named) if named is not None else None
    from_code = _by_legacy_code(legacy, fmt) if legacy is not None else None
    if name and from_code and name != from_code:
        raise ValueError(
            f"nan_policy {name!r} and {_LEGACY_ATTR}={legacy!r} disagree; {nan_policy_help()}"
        )
    return name or from_code or DEFAULT_NAN_POLICY


def resolve_nan_policy(kernel: object, fmt: FormatSpec, stated: str | None) -> str:
    """``stated`` (a caller's ``--nan-policy``) checked against what ``kernel`` declares.

    Raises:
        ValueError: as :func:`declared_nan_policy`, for an unknown ``stated``, or
            when the kernel declares a different policy than ``stated``.
    """
    declared = declared_nan_policy(kernel, fmt)
    if stated is None:
        return declared
    _by_name(stated)
    explicit = any(getattr(kernel, a, None) is not None for a in ("nan_policy", _LEGACY_ATTR))
    if explicit and declared != stated:
        raise ValueError(f"the kernel declares NaN policy {declared!r}, not {stated!r}")
    return stated
