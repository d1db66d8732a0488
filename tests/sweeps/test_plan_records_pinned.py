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
    "fast-vs-scan-e4m3fn-sat-canonical": "db0eebe437740709",
    "fast-vs-scan-e4m3fn-nosat-canonical": "5c1ee24f07b779d0",
    "fast-vs-scan-e5m2-sat-canonical": "1515fd0165f45ade",
    "fast-vs-scan-e5m2-nosat-canonical": "b8eed72772b0d4ba",
    "fast-vs-scan-e4m3fnuz-sat-canonical": "cd39c4163527a4ba",
    "fast-vs-scan-e4m3fnuz-nosat-canonical": "85cad572cf21b8b6",
    "fast-vs-scan-e5m2fnuz-sat-canonical": "096392d0ec0b97a0",
    "fast-vs-scan-e5m2fnuz-nosat-canonical": "8c167d50eb165043",
    "fast-bits-vs-scan-e4m3fn-sat-canonical": "bef185afde465c93",
    "fast-bits-vs-scan-e4m3fn-nosat-canonical": "f398c324e1fe33e5",
    "fast-bits-vs-scan-e5m2-sat-canonical": "e6523bc04236f29a",
    "fast-bits-vs-scan-e5m2-nosat-canonical": "5cf67fa40c4aa2aa",
    "fast-bits-vs-scan-e4m3fnuz-sat-canonical": "b45fd9a3f6d0c106",
    "fast-bits-vs-scan-e4m3fnuz-nosat-canonical": "a952741c32afb554",
    "fast-bits-vs-scan-e5m2fnuz-sat-canonical": "66ec7bedda3f0364",
    "fast-bits-vs-scan-e5m2fnuz-nosat-canonical": "61a1978a171057fa",
    "fast-numpy-vs-scan-e4m3fn-sat-canonical": "1ebad28706217d19",
    "array-vs-scan-e4m3fn-sat-canonical": "16763530ec0a2287",
    "fast-vs-f32tofp8-e4m3fn-sat-canonical": "7c503520831e5669",
    "fast-vs-ml_dtypes-e4m3fn-nosat-keep-sign": "80039740901c0493",
    "fast-vs-ml_dtypes-e5m2-nosat-keep-sign": "4fd4f318bfa27d9b",
    "fast-vs-ml_dtypes-e4m3fnuz-nosat-keep-sign": "8d6d029f962fe0ca",
    "fast-vs-ml_dtypes-e5m2fnuz-nosat-keep-sign": "831759d29102b837",
    "fast-vs-ml_dtypes-e4m3fn-nosat-canonical": "c910857770eb642e",
    "fast-vs-ml_dtypes-e4m3fn-sat-keep-sign": "a2a20141beb933b1",
    "fast-vs-ml_dtypes-e5m2-sat-keep-sign": "ff90fd8176c44afe",
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
