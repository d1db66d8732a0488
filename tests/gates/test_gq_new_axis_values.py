"""Three axis values, each held to a torch kernel written from its behaviour.

* ``arithmetic = "input-quotient"``: torch divides (or multiplies) a bfloat16
  tensor by a 0-dim float32 scale in float32 and rounds the quotient to
  bfloat16; the scale is never rounded.
* ``e8m0_nan = "zero-byte"``: a NaN amax gets e8m0 byte 0x00.
* ``amax_lanes = W``: each of W lanes is a ``torch.amax`` (NaN kept), the lanes
  combined by ``fmax`` (a NaN lane dropped with all its values).

Each kernel passes GQ under its rule and fails under the rule without the
value; the lane semantics are derived against numpy first.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates import run_gq
from fp8lab.gates.records import GateStatus

torch = pytest.importorskip("torch", reason="torch is not installed (optional: the torch extra)")

M = 448.0


def _tensor(x: np.ndarray) -> Any:
    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(x, np.float32))


def _codes(q: Any) -> np.ndarray:
    """SATFINITE e4m3fn codes of float32 ``q``, NaN to 0x7F (torch's cast does not saturate)."""
    codes = torch.clamp(q, -M, M).to(torch.float8_e4m3fn).view(torch.uint8)
    return torch.where(q.isnan(), 0x7F, codes).to(torch.uint8).numpy()


def input_quotient(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tensor, fmaxf amax, ``x * (1 / s)`` with ``s`` a 0-dim float32 tensor."""
    t = _tensor(x)
    a = t.float().abs()
    s = torch.where(a.isnan(), 0.0, a).amax() / torch.tensor(M)
    q = t * s.reciprocal()  # bfloat16 input: a bfloat16 quotient, computed in float32
    q = torch.fmax(torch.fmin(q.float(), torch.tensor(M)), torch.tensor(-M))
    return _codes(q), s.reshape(1).numpy()


def nan_zero_byte(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MX RCEIL per 32, ``torch.amax`` (NaN wins), a NaN amax's byte 0x00."""
    t = _tensor(x).float()
    blocks = t.reshape(-1, 32)
    d = blocks.abs().amax(dim=1) * (1.0 / torch.tensor(M))
    bits = d.view(torch.int32)
    e, m = (bits >> 23) & 0xFF, bits & 0x7F_FFFF
    byte = e + torch.where(e == 0, m > 0x40_0000, m != 0).int()
    byte = torch.where(e == 255, 255, byte)
    byte = torch.where(d.isnan(), 0, byte)  # the behaviour under test
    inv = (2.0 ** (127 - byte.double())).float()
    q = blocks * inv[:, None]
    q = torch.where((byte == 255)[:, None], torch.nan, q)
    return _codes(q).reshape(x.shape), byte.to(torch.uint8).numpy().reshape(x.shape[0], -1)


def lanes_8(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """vLLM's per-group rule, its amax over 8 lanes: ``torch.amax`` per lane, ``fmax`` across."""
    t = _tensor(x).float()
    blocks = t.reshape(-1, 128)
    lanes = blocks.abs().reshape(-1, 16, 8).amax(dim=1)  # lane i % 8 of each block
    amax = torch.where(lanes.isnan(), 0.0, lanes).amax(dim=1)
    s = torch.fmax(amax, torch.tensor(1e-10)) / torch.tensor(M)
    q = torch.fmin(torch.fmax(blocks / s[:, None], torch.tensor(-M)), torch.tensor(M))
    return _codes(q).reshape(x.shape), s.numpy().reshape(x.shape[0], -1)


CASES = [
    (input_quotient, "per-tensor", "vllm-per-tensor[arithmetic=input-quotient]",
     ("vllm-per-tensor[arithmetic=input]", "vllm-per-tensor")),
    (nan_zero_byte, "mxfp8", "rceil[e8m0_nan=zero-byte]", ("rceil",)),
    (lanes_8, "per-group", "vllm-per-group[amax_lanes=8]", ("vllm-per-group",)),
]  # fmt: skip


@pytest.mark.slow(reason="GQ's exact reference on each rule's population, three kernels")
@pytest.mark.parametrize(("kernel", "scheme", "rule", "others"), CASES, ids=[c[2] for c in CASES])
def test_a_torch_kernel_passes_its_rule_and_fails_the_rule_without_the_value(
    kernel: Any, scheme: str, rule: str, others: tuple[str, ...]
) -> None:
    own = run_gq(kernel, scheme=scheme, rule=rule)
    assert own.status is GateStatus.PASS, (own.reason, own.first_offenders[:2])
    for other in others:
        result = run_gq(kernel, scheme=scheme, rule=other)
        assert result.status is GateStatus.FAIL and result.assertions_failed >= 3, other


def _scalar_skip(a: np.ndarray) -> np.ndarray:
    return np.fmax.reduce(a, axis=1, initial=np.float32(0))


def test_lanes_that_skip_nan_are_the_scalar_skip_and_lanes_that_keep_it_are_not() -> None:
    rng = np.random.default_rng(7)
    a = np.abs(rng.standard_normal((4000, 32))).astype(np.float32)
    a[rng.random(a.shape) < 0.05] = np.nan
    for w in (2, 4, 8, 16):
        lanes = a.reshape(len(a), -1, w)
        skip_lanes = np.fmax.reduce(np.fmax.reduce(lanes, axis=1, initial=0), axis=1, initial=0)
        assert np.array_equal(skip_lanes, _scalar_skip(a))  # fmaxf drops a NaN wherever it is
        keep = np.maximum.reduce(lanes, axis=1, initial=0)
        lane_amax = np.fmax.reduce(keep, axis=1, initial=0)
        # lanes keeping NaN: the largest value of the NaN-free lanes, so a NaN in the lane of
        # the block's maximum (and only there) lowers the amax below the scalar skip's
        top_lane = np.nanargmax(a, axis=1) % w
        nan_in_top = np.isnan(lanes[np.arange(len(a)), :, top_lane]).any(axis=1)
        assert (lane_amax < _scalar_skip(a))[nan_in_top].all()
        assert (lane_amax == _scalar_skip(a))[~nan_in_top].all() and nan_in_top.sum() > 100
