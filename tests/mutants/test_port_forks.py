"""Many port mutants in one compiled pass: the same answers as one checker per mutant."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from fp8lab.kernels import f32tofp8
from fp8lab.kernels import f32tofp8_twin as twin
from fp8lab.mutants import port_forks
from fp8lab.mutants.source import compile_module, mutant_tree, source_mutations

# windows of 2**16 patterns where the port's branches meet: zero and float32
# subnormals, e4m3fn subnormals and the first normals, 1.0, 448 and beyond, inf and NaN
_WINDOWS = (
    0x0000_0000, 0x007F_8000, 0x3A80_0000, 0x3B00_0000, 0x3C7F_8000, 0x3F7F_8000,
    0x43DF_8000, 0x43E0_0000, 0x7F7F_8000, 0x7F80_0000, 0x7FC0_0000,
    0x803F_0000, 0xBB7F_8000, 0xC3DF_C000, 0xFF80_0000, 0xFFFF_0000,
)  # fmt: skip


def _lanes() -> tuple[port_forks.Lane, list[str], list[port_forks.Lane], list[object]]:
    """The port, and every mutant of it whose glue is the port's and whose lane is modelled."""
    original_tree = twin.port_tree()
    keys, lanes, checkers = [], [], []
    for mutation in source_mutations("fp8lab.kernels.f32tofp8"):
        tree = mutant_tree(mutation)
        if not twin.same_glue(tree, original_tree):
            continue
        try:
            module = compile_module(copy.deepcopy(tree), "forks_mutant")
        except Exception:  # noqa: BLE001 - a mutant that cannot be built has no lane
            continue
        check = twin.twin_checker(module, tree)
        if check is not None:
            keys.append(mutation.key)
            lanes.append((tree, module.__dict__))
            checkers.append(check)
    return (original_tree, f32tofp8.__dict__), keys, lanes, checkers


@pytest.mark.slow
def test_the_shared_pass_answers_what_each_mutant_s_checker_answers() -> None:
    original, keys, lanes, checkers = _lanes()
    assert len(lanes) > 40
    x = np.concatenate(
        [(np.arange(1 << 16, dtype=np.uint32) + np.uint32(lo)).view(np.float32) for lo in _WINDOWS]
    )
    want = twin.compiled_f32_to_fp8()(x)
    killed = 0
    for at in range(0, len(lanes), port_forks.MAX_FORKS):
        check = port_forks.fork_checker(original, lanes[at : at + port_forks.MAX_FORKS])
        assert check is not None
        got = check(x, want)
        for key, each, first in zip(keys[at:], checkers[at:], got, strict=False):
            assert int(first) == int(each(x, want)), key  # type: ignore[operator]
            killed += first >= 0
        for lo in (0, 5, 1 << 19):  # a start inside the chunk finds the same lanes after it
            tail = check(x[lo:], want[lo:])
            assert all(
                t == (f - lo if f >= lo else -1) or (f < lo and t >= 0)
                for f, t in zip(got, tail, strict=True)
            )
    assert killed > 10  # most mutants of the port differ somewhere in these windows


def test_a_mutant_planted_on_one_lane_is_found_there_beside_an_equal_one() -> None:
    hidden = np.array([0x3F00_1235], np.uint32).view(np.float32)[0]
    late = _with_steps(f"settle(flat == np.float32({float(hidden)!r}), 0x01)", -1)
    same = _with_steps("settle(flat != flat, 0x7F)", -1)  # NaN settled long before: no change
    lanes = [(t, compile_module(copy.deepcopy(t), "planted").__dict__) for t in (late, same)]
    original = (twin.port_tree(), f32tofp8.__dict__)
    points = port_forks.fork_points(original, lanes)
    assert points[0] == points[1] == len(twin.lane_groups(*original)) - 2  # before the last step
    check = port_forks.fork_checker(original, lanes)
    x = (np.arange(1 << 20, dtype=np.uint32) + np.uint32(0x3F00_0000)).view(np.float32)
    want = f32tofp8.f32_to_fp8(x)
    assert list(check(x, want)) == [0x1235, -1]
    assert list(check(x[0x1236:], want[0x1236:])) == [-1, -1]
    wrong = want.copy()
    wrong[7] ^= 1  # a wanted code the original does not give: no mutant is vouched for there
    assert list(check(x, wrong)) == [7, 7]


def _with_steps(extra: str, at: int) -> object:
    import ast

    tree = copy.deepcopy(twin.port_tree())
    steps = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_steps")
    steps.body[at:at] = ast.parse(extra).body
    return ast.fix_missing_locations(tree)
