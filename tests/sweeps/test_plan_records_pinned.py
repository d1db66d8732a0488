"""The default plan's records on boundary windows, pinned: speed-ups must not change a byte.

Each digest is the SHA-256 (first 16 hex digits) of a proof's records over
:data:`WINDOWS`, serialised as JSON without the timing field. The windows hold
both signs' NaNs and infinities, the sign cut at 2**31, the fp8 maxima and the
e4m3fn subnormals. To re-pin after a deliberate change to what a record says,
print ``plan_digests()``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from fp8lab.evidence.proofs import PROOF_PLAN
from fp8lab.sweeps.exhaustive_plan import run_shared
from fp8lab.sweeps.range_run import RangeRun

WIDTH = 1 << 13
CENTRES = (0x7F80_0000, 0xFF80_0000, 0x8000_0000, 0x43E0_0000, 0x4760_0000, 0x3B00_0000)
WINDOWS = (*((c - WIDTH // 2, c + WIDTH // 2) for c in CENTRES), ((1 << 32) - WIDTH, 1 << 32))

PINNED = {
    "fast-vs-scan-e4m3fn-sat-canonical": "5cb434016e5a8c1c",
    "fast-vs-scan-e4m3fn-nosat-canonical": "573a1f38e68a80ce",
    "fast-vs-scan-e5m2-sat-canonical": "005671b426b0ddec",
    "fast-vs-scan-e5m2-nosat-canonical": "2d4433ee597b4f41",
    "fast-vs-scan-e4m3fnuz-sat-canonical": "47df5c1add78d5c8",
    "fast-vs-scan-e4m3fnuz-nosat-canonical": "b6cf7e4d8578899e",
    "fast-vs-scan-e5m2fnuz-sat-canonical": "74be824297e9802d",
    "fast-vs-scan-e5m2fnuz-nosat-canonical": "f8b978154845fe9f",
    "fast-bits-vs-scan-e4m3fn-sat-canonical": "2a208a68b1f374e8",
    "fast-bits-vs-scan-e4m3fn-nosat-canonical": "f647ee3d39557a3c",
    "fast-bits-vs-scan-e5m2-sat-canonical": "48437a69cf64b97a",
    "fast-bits-vs-scan-e5m2-nosat-canonical": "9f7232f74b758344",
    "fast-bits-vs-scan-e4m3fnuz-sat-canonical": "b18744094c76f09b",
    "fast-bits-vs-scan-e4m3fnuz-nosat-canonical": "dcae59ae7af05e6b",
    "fast-bits-vs-scan-e5m2fnuz-sat-canonical": "8bf1f0d20488c1a6",
    "fast-bits-vs-scan-e5m2fnuz-nosat-canonical": "b2f7287e9e8e6f63",
    "fast-numpy-vs-scan-e4m3fn-sat-canonical": "6db5fc00f7dcb395",
    "array-vs-scan-e4m3fn-sat-canonical": "c8c26a09795186ac",
    "fast-vs-f32tofp8-e4m3fn-sat-canonical": "7819ee566c9bd5c1",
    "fast-vs-ml_dtypes-e4m3fn-nosat-keep-sign": "b161d3d80900f6aa",
    "fast-vs-ml_dtypes-e5m2-nosat-keep-sign": "cfd6618df0f5e97c",
    "fast-vs-ml_dtypes-e4m3fnuz-nosat-keep-sign": "a3b715bf8d3148c6",
    "fast-vs-ml_dtypes-e5m2fnuz-nosat-keep-sign": "823f2babe258732b",
    "fast-vs-ml_dtypes-e4m3fn-nosat-canonical": "2ce1d54ee2b12d11",
    "fast-vs-ml_dtypes-e4m3fn-sat-keep-sign": "c6d60987af57c0fd",
    "fast-vs-ml_dtypes-e5m2-sat-keep-sign": "b72d1f7c03b5bd39",
}


def plan_digests() -> dict[str, str]:
    """Each proof's digest over :data:`WINDOWS`, by shared passes in this process."""
    plan = tuple((p.a, p.b, p.format, p.saturate, p.nan) for p in PROOF_PLAN)
    texts: dict[str, list[str]] = {p.slug: [] for p in PROOF_PLAN}
    for lo, hi in WINDOWS:
        run = RangeRun(start=lo, stop=hi, chunk=WIDTH // 2, workers=1)
        for proof, record in zip(PROOF_PLAN, run_shared(plan, run), strict=True):
            fields = asdict(record)
            fields.pop("wall_seconds")
            texts[proof.slug].append(json.dumps(fields, sort_keys=True))
    return {
        slug: hashlib.sha256("\n".join(t).encode()).hexdigest()[:16] for slug, t in texts.items()
    }


def test_the_plan_records_are_the_pinned_ones() -> None:
    assert plan_digests() == PINNED
