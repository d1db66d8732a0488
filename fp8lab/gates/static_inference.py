"""``rules infer --scheme static``: the static rule a black-box G1 kernel follows.

The kernel (``quantize(x, scale)``, one float32 scale, as G1 calls it) is
called once per G1 scale and input dtype on the words that tell the static
rules apart (:func:`static_calls`): the G1 words placed for e4m3fn and for
e5m2, and every scaled midpoint of both formats with its float32 and
bfloat16 neighbours, where divide and reciprocal, float32 and bfloat16
arithmetic, and the two tie rules split. The search
(:func:`fp8lab.gates.rule_inference.search_rules`, element stage alone) runs
the static port (:func:`fp8lab.kernels.static_rule.static_quant`) from every
named per-tensor static rule over the element format, ``apply``,
``arithmetic``, ``clamp``, ``element_rounding``, ``saturate``,
``signed_zero`` and ``nan_code``. The chosen rule is then checked by G1
itself (:func:`fp8lab.gates.g1.run_g1`) under that rule, the kernel's answers
served word by word from what it returned (a static per-tensor kernel codes
each word by itself). Codes returned as a float8 array fix the format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.gates.compare import nan_code_mask
from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
from fp8lab.gates.gq import GqCall
from fp8lab.gates.records import GateResult
from fp8lab.gates.rule_candidates import STATIC_ELEMENTS, STATIC_SCHEME, named_rules
from fp8lab.gates.rule_inference import Inference, _decide, search_rules
from fp8lab.kernels.static_rule import static_quant
from fp8lab.populations import G1_SEED, g1_population
from fp8lab.populations.g1_rules import split_candidates
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.format_dtypes import input_dtype
from fp8lab.specs.formats import get_format
from fp8lab.specs.nan import NAN_POLICIES
from fp8lab.specs.scale_rules import NanCode, ScaleRule

__all__ = ["infer_static_rule", "record_static_outputs", "static_calls"]


def static_calls(seed: int = G1_SEED) -> list[GqCall]:
    """One call per G1 scale and input dtype: ``(x, float32 scale)``, x the telling words."""
    calls = []
    for s in G1_SCALES:
        parts = [g1_population(s, seed=seed, element=e).words for e in STATIC_ELEMENTS]
        parts += [split_candidates(e, s) for e in STATIC_ELEMENTS]
        words = np.concatenate(parts)
        _, first = np.unique(words.view(np.uint32), return_index=True)
        words = words[np.sort(first)]
        for d in G1_INPUT_DTYPES:
            x = words.astype(input_dtype(d))
            if d == "bfloat16":  # each bfloat16 word once
                _, first = np.unique(x.view(np.uint16), return_index=True)
                x = x[np.sort(first)]
            calls.append(GqCall("static", f"s={s!r}/{d}", (x, np.float32(s))))
    return calls


def record_static_outputs(kernel: Any, calls: Sequence[GqCall]) -> tuple[list[np.ndarray], str]:
    """The kernel's codes for each call, and the format its float8 answers name ("" if bytes).

    Raises:
        KernelFaultError: for a call that raised, exited or timed out, or an
            answer that is not codes of x's shape (bytes, or float8 of one format).
    """
    outputs, formats = [], set()
    quantize = getattr(kernel, "quantize", kernel)
    for call in calls:
        got = call_kernel(quantize, *call.args)
        if not isinstance(got, np.ndarray) or got.shape != call.args[0].shape:
            kind = f"{getattr(got, 'dtype', type(got).__name__)}{getattr(got, 'shape', '')}"
            raise KernelFaultError(
                f"kernel returned {kind}, want codes of shape {call.args[0].shape}"
            )
        name = got.dtype.name
        if got.dtype.itemsize == 1 and name.startswith("float8_"):
            formats.add(name.removeprefix("float8_"))
            got = got.view(np.uint8)
        if got.dtype != np.uint8:
            raise KernelFaultError(f"kernel returned {got.dtype} codes, want uint8 or float8")
        outputs.append(np.array(got, np.uint8, copy=True))
    if len(formats) > 1:
        raise KernelFaultError(
            f"kernel returned codes of {len(formats)} formats: {sorted(formats)}"
        )
    return outputs, formats.pop() if formats else ""


class _Screen:
    def __init__(self, calls: Sequence[GqCall], outputs: Sequence[np.ndarray]) -> None:
        self.calls, self.outputs = calls, outputs

    def codes(self, rule: ScaleRule) -> npt.NDArray[np.int64]:
        fmt = get_format(rule.element)
        out = np.zeros(len(self.calls), np.int64)
        for i, (call, got) in enumerate(zip(self.calls, self.outputs, strict=True)):
            want = static_quant(call.args[0], call.args[1], rule)
            bad = got != want
            if rule.nan_code is NanCode.ANY:
                bad &= ~(nan_code_mask(got, fmt) & nan_code_mask(want, fmt))
            out[i] = int(bad.sum())
        return out


class _Replay:
    """A G1 kernel that answers each word with the code the kernel gave it when recorded."""

    name = "recorded"

    def __init__(self, calls: Sequence[GqCall], outputs: Sequence[np.ndarray]) -> None:
        self.tables: dict[tuple[float, str], tuple[np.ndarray, np.ndarray]] = {}
        for call, got in zip(calls, outputs, strict=True):
            x, s = call.args
            bits = _bits(x)
            order = np.argsort(bits)
            self.tables[float(s), x.dtype.name] = (bits[order], got[order])

    def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
        keys, codes = self.tables.get((float(np.float32(scale)), x.dtype.name), (None, None))
        if keys is None or codes is None:
            raise ValueError(f"no recorded call at scale {scale!r} for {x.dtype.name}")
        bits = _bits(x.reshape(-1))
        at = np.clip(np.searchsorted(keys, bits), 0, keys.size - 1)
        if (keys[at] != bits).any():
            raise ValueError("a word the inference did not record")
        return codes[at].reshape(x.shape)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).view(np.uint16 if x.dtype.itemsize == 2 else np.uint32).astype(np.uint32)


def infer_static_rule(
    kernel: str, calls: Sequence[GqCall], outputs: Sequence[np.ndarray], element: str = ""
) -> Inference:
    """The static rules that reproduce the kernel's ``outputs`` for ``calls``.

    ``element``: the format its float8 answers named ("" when it returned bytes).
    """
    named = {n: r for n, r in named_rules(STATIC_SCHEME).items() if isinstance(r, ScaleRule)}
    if element:
        named = {n: r for n, r in named.items() if r.element == element} or {
            n: replace(r, element=element) for n, r in named.items()
        }
    screen = _Screen(calls, outputs)
    found = search_rules(STATIC_SCHEME, named, len(calls), None, screen.codes, screen.codes)
    replay = _Replay(calls, outputs)

    def check(rule: Any) -> GateResult:
        return run_g1(replay, rule=rule, nan_policy=NAN_POLICIES["canonical"])

    return _decide(STATIC_SCHEME, kernel, calls, found, check)
