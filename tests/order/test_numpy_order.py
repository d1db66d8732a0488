"""numpy's float32 matmul (this host's BLAS): the inferred tree of every output, run as a
model, reproduces numpy's outputs bit for bit on seeded random fp8 operands.

Inference and check run on the same host, so the test holds whatever sgemm kernel
the BLAS picks here; the order itself (one class or several) is a fact of the host,
never asserted. The subprocess test repeats the inference under the BLAS settings a
host may have (core types, thread counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from fp8lab.gates.compare import assert_bitexact
from fp8lab.order import F32MatmulProbe, pairwise_tree, sequential_tree
from fp8lab.order.per_position import PositionsRecord, infer_positions
from fp8lab.order.run import tree_matmul
from fp8lab.order.targets import numpy_matmul
from fp8lab.populations.gemm import remap_nan_bytes
from fp8lab.refs.gemm_model import decode_e4m3fn

pytestmark = pytest.mark.process


def fp8_operands(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = remap_nan_bytes(rng.integers(0, 256, (m, k), dtype=np.uint8))
    b = remap_nan_bytes(rng.integers(0, 256, (n, k), dtype=np.uint8))
    return decode_e4m3fn(a), decode_e4m3fn(b)


SHAPES = [(16, 16, 16), (16, 16, 64), (1, 16, 128), (64, 64, 128), (16, 16, 1000)]


def infer_numpy(m: int, n: int, k: int) -> PositionsRecord:
    return infer_positions(F32MatmulProbe(numpy_matmul, k, m=m, n=n), "numpy", seed=k)


def by_class(rec: PositionsRecord, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for cls in rec.classes:
        assert cls.tree is not None
        full = tree_matmul(cls.tree, a, b)
        for r, c in cls.outputs:
            out[r, c] = full[r, c]
    return out


@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_inferred_classes_reproduce_numpy_bit_for_bit(m: int, n: int, k: int) -> None:
    rec = infer_numpy(m, n, k)
    assert rec.verdict == "reproduced", rec.evidence
    assert sorted(p for c in rec.classes for p in c.outputs) == [
        (r, c) for r in range(m) for c in range(n)
    ]
    for seed in (1, 2):  # operands apart from the record's own check
        a, b = fp8_operands(seed * 7919 + k, m, n, k)
        assert assert_bitexact(by_class(rec, a, b), numpy_matmul(a, b)) == m * n


def test_inferred_classes_reproduce_numpy_at_k_4096() -> None:
    rec = infer_numpy(16, 16, 4096)
    assert rec.verdict == "reproduced" and rec.outputs_reproduced == rec.outputs_checked == 512


def test_a_wrong_tree_does_not_reproduce_numpy() -> None:
    # the check has teeth: a known order that is not numpy's misses some outputs
    m, n, k = 16, 16, 64
    rec = infer_numpy(m, n, k)
    a, b = fp8_operands(5, m, n, k)
    want = numpy_matmul(a, b)
    for cls in rec.classes:
        wrong = next(t for t in (sequential_tree(k), pairwise_tree(k)) if t != cls.tree)
        got = tree_matmul(wrong, a, b)
        assert any(got[p] != want[p] for p in cls.outputs)


def test_fused_trees_are_refused_as_float32_models() -> None:
    from fp8lab.order import fused_tree

    a = np.ones((1, 64), np.float32)
    with pytest.raises(ValueError, match="fused node"):
        tree_matmul(fused_tree(64, 32), a, a)


SETTINGS = [
    {"OPENBLAS_NUM_THREADS": threads, **core}
    for core in (
        {},
        {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"},
        {"OPENBLAS_CORETYPE": "Prescott"},
    )
    for threads in ("1", "2")
]
CHILD = """
import json
from fp8lab.order import F32MatmulProbe
from fp8lab.order.per_position import infer_positions
from fp8lab.order.targets import numpy_matmul
out = []
for m, n, k in [(16, 16, 16), (16, 16, 64), (1, 16, 128)]:
    rec = infer_positions(F32MatmulProbe(numpy_matmul, k, m=m, n=n), "numpy", seed=k)
    out.append(rec.to_json())
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(s.values()))
def test_numpy_order_is_reproduced_under_each_blas_setting(setting: dict[str, str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**env, **setting},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for record in json.loads(done.stdout):
        assert record["verdict"] == "reproduced", record["evidence"]
        assert record["outputs_reproduced"] == record["outputs_checked"] > 0
        env = record["host"]["environment"]
        assert {k: v for k, v in env.items() if k.startswith("OPENBLAS_")} == {
            k: v for k, v in setting.items() if k.startswith("OPENBLAS_")
        }
        assert record["host"]["blas"]["library"]  # recorded, whatever it is
